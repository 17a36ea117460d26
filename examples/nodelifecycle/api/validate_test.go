package api_test

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/listwatch/listwatch/examples/nodelifecycle/api"
	"github.com/listwatch/listwatch/examples/nodelifecycle/api/apitest"
	"github.com/listwatch/listwatch/reflector"
)

// A pod or node that does not decode into its k8s.io/api type is refused
// with 400 and kube-apiserver's message; nothing is stored.
func TestMalformedObjectsRefused(t *testing.T) {
	c, ctx := apitest.Start(t, etcdServer.Client, apitest.Options{}).Client, testCtx(t)
	for _, tc := range []struct {
		k    api.Kind
		body map[string]any
		want string
	}{
		{api.Pods, map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "bad", "namespace": "default"},
			"spec": map[string]any{"containers": "not-a-list"}},
			`Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal string into Go struct field PodSpec.spec.containers of type []v1.Container`},
		{api.Nodes, map[string]any{"apiVersion": "v1", "kind": "Node", "metadata": map[string]any{"name": "bad"},
			"spec": map[string]any{"taints": map[string]any{"key": "x"}}},
			`Node in version "v1" cannot be handled as a Node: json: cannot unmarshal object into Go struct field NodeSpec.spec.taints of type []v1.Taint`},
	} {
		u := &unstructured.Unstructured{Object: tc.body}
		err := c.Create(ctx, tc.k, u)
		require.True(t, apierrors.IsBadRequest(err), "%s: %v", tc.k.Plural, err)
		require.Equal(t, tc.want, err.Error())
		ns := ""
		if tc.k == api.Pods {
			ns = "default"
		}
		require.True(t, apierrors.IsNotFound(c.Get(ctx, tc.k, ns, "bad", &unstructured.Unstructured{})), tc.k.Plural)
	}
	require.NoError(t, c.Create(ctx, api.Pods, pod("good", "n1")))
	good := &unstructured.Unstructured{}
	require.NoError(t, c.Get(ctx, api.Pods, "default", "good", good))
	require.NoError(t, unstructured.SetNestedField(good.Object, "not-a-list", "spec", "containers"))
	require.True(t, apierrors.IsBadRequest(c.Update(ctx, api.Pods, good)))
}

// syncBuffer is a bytes.Buffer safe for a logger's concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// A pod its informer cannot decode (written to etcd behind the server's
// back) is not silent: the pod informer's reflector logs the failing
// lists and watches at Warn, naming the resource.
func TestInformerErrorsLogged(t *testing.T) {
	var logs syncBuffer
	e := apitest.Start(t, etcdServer.Client, apitest.Options{
		Informers: []reflector.InformerOption{reflector.WithLogger(slog.New(slog.NewTextHandler(&logs, nil)))}})
	ctx := testCtx(t)
	e.StartInformers(t)
	bad := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Pod",
		"metadata": map[string]any{"name": "bad", "namespace": "default"}, "spec": map[string]any{"containers": "not-a-list"}}}
	require.NoError(t, e.API.Stores[api.Pods].Create(ctx, api.KeyRoots[api.Pods]+"/default/bad", bad, nil, 0))
	require.Eventually(t, func() bool {
		out := logs.String()
		return strings.Contains(out, "level=WARN") && strings.Contains(out, `reflector="/v1, Resource=pods"`) &&
			strings.Contains(out, "PodSpec.spec.containers")
	}, 10e9, 10e6, "nothing logged:\n%s", logs.String())
	t.Log(logs.String())
}
