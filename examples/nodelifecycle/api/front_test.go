package api_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/listwatch/listwatch/examples/nodelifecycle/api"
	"github.com/listwatch/listwatch/examples/nodelifecycle/api/apitest"
)

func deployment(name string, image string) *appsv1.Deployment {
	n := int32(2)
	lbl := map[string]string{"app": name}
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: appsv1.DeploymentSpec{Replicas: &n, Selector: &metav1.LabelSelector{MatchLabels: lbl},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: lbl},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "a", Image: image}, {Name: "b", Image: "sidecar:1"}}}}}}
}

// TestStrategicMergePatch: a strategic merge patch of a Deployment's
// containers (what kubectl set image sends) merges by container name,
// where a JSON merge patch would replace the whole list; a stale
// resourceVersion in the patch is the client's conflict.
func TestStrategicMergePatch(t *testing.T) {
	c, ctx := apitest.Start(t, etcdServer.Client, apitest.Options{}).Client, testCtx(t)
	require.NoError(t, c.Create(ctx, api.Deployments, deployment("web", "nginx:1")))
	patch := []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"a","image":"nginx:2"}]}}}}`)
	var got appsv1.Deployment
	require.NoError(t, c.Patch(ctx, api.Deployments, "default", "web", "", types.StrategicMergePatchType, patch, &got))
	require.Len(t, got.Spec.Template.Spec.Containers, 2, "merged by name, not replaced")
	require.Equal(t, "nginx:2", got.Spec.Template.Spec.Containers[0].Image)
	require.Equal(t, "sidecar:1", got.Spec.Template.Spec.Containers[1].Image)
	require.Equal(t, int64(2), got.Generation)

	stale := []byte(`{"metadata":{"resourceVersion":"1"},"spec":{"replicas":5}}`)
	err := c.Patch(ctx, api.Deployments, "default", "web", "", types.StrategicMergePatchType, stale, nil)
	require.True(t, apierrors.IsConflict(err), "%v", err)
	err = c.Patch(ctx, api.Deployments, "default", "nope", "", types.StrategicMergePatchType, patch, nil)
	require.True(t, apierrors.IsNotFound(err), "%v", err)
}

// TestDeletionPropagation: DELETE with propagationPolicy Foreground or
// Orphan marks the object with the matching finalizer (deletionTimestamp
// set, object kept for the collector); Background deletes it. The
// library's server does this; nothing in front of it is needed.
func TestDeletionPropagation(t *testing.T) {
	c, ctx := apitest.Start(t, etcdServer.Client, apitest.Options{}).Client, testCtx(t)
	for _, tc := range []struct {
		policy    metav1.DeletionPropagation
		finalizer string
	}{{metav1.DeletePropagationForeground, metav1.FinalizerDeleteDependents}, {metav1.DeletePropagationOrphan, metav1.FinalizerOrphanDependents}} {
		name := "d-" + strings.ToLower(string(tc.policy))
		require.NoError(t, c.Create(ctx, api.Deployments, deployment(name, "nginx:1")))
		p := tc.policy
		require.NoError(t, c.DeleteWith(ctx, api.Deployments, "default", name, metav1.DeleteOptions{PropagationPolicy: &p}))
		var got appsv1.Deployment
		require.NoError(t, c.Get(ctx, api.Deployments, "default", name, &got))
		require.NotNil(t, got.DeletionTimestamp, tc.policy)
		require.True(t, slices.Contains(got.Finalizers, tc.finalizer), "%s: %v", tc.policy, got.Finalizers)
	}
	require.NoError(t, c.Create(ctx, api.Deployments, deployment("bg", "nginx:1")))
	bg := metav1.DeletePropagationBackground
	require.NoError(t, c.DeleteWith(ctx, api.Deployments, "default", "bg", metav1.DeleteOptions{PropagationPolicy: &bg}))
	require.True(t, apierrors.IsNotFound(c.Get(ctx, api.Deployments, "default", "bg", &appsv1.Deployment{})))
}

// TestProtobufBody: a Deployment posted in Kubernetes' protobuf encoding
// (as typed client-go clients post it) is stored as the same object.
func TestProtobufBody(t *testing.T) {
	a := apitest.Start(t, etcdServer.Client, apitest.Options{}).API
	ctx := testCtx(t)
	d := deployment("pb", "nginx:1")
	raw, err := d.Marshal()
	require.NoError(t, err)
	env := runtime.Unknown{TypeMeta: runtime.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"}, Raw: raw}
	body, err := env.Marshal()
	require.NoError(t, err)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.URL+"/apis/apps/v1/namespaces/default/deployments",
		bytes.NewReader(append(append([]byte(nil), api.ProtobufMagic...), body...)))
	require.NoError(t, err)
	req.Header.Set("Content-Type", api.ProtobufMediaType)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	var got appsv1.Deployment
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&got))
	require.Equal(t, "nginx:1", got.Spec.Template.Spec.Containers[0].Image)
	require.Equal(t, int32(2), *got.Spec.Replicas)

	bad, err := http.NewRequestWithContext(ctx, http.MethodPost, a.URL+"/apis/apps/v1/namespaces/default/deployments",
		bytes.NewReader([]byte("not protobuf")))
	require.NoError(t, err)
	bad.Header.Set("Content-Type", api.ProtobufMediaType)
	resp2, err := http.DefaultClient.Do(bad)
	require.NoError(t, err)
	resp2.Body.Close()
	require.Equal(t, http.StatusUnsupportedMediaType, resp2.StatusCode)
}
