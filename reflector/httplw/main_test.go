package httplw

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/server"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/storage/etcd3"
)

// etcdServer is the package's one embedded etcd; each test has its prefix.
var etcdServer *embedtest.Server

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "serve" {
		os.Exit(serveChild())
	}
	os.Exit(embedtest.RunMain(m, &etcdServer, embedtest.Options{}))
}

// fixture is an HTTP server over an etcd3 store of widgets.
type fixture struct {
	t      testing.TB
	store  *etcd3.Store
	srv    *server.Server
	ts     *httptest.Server
	client *http.Client
}

func newFixture(tb testing.TB, wrap ...func(storage.Interface) storage.Interface) *fixture {
	tb.Helper()
	// Start empty even when tests run again (-count) on the shared etcd.
	_, err := etcdServer.Client.Delete(testCtx(tb), embedtest.Prefix(tb), clientv3.WithPrefix())
	require.NoError(tb, err)
	st, err := etcd3.New(etcd3.Config{
		Client: etcdServer.Client, Codec: widget.UnstructuredCodec,
		NewFunc: widget.NewUnstructured, NewListFunc: widget.NewUnstructuredList,
		Prefix: embedtest.Prefix(tb), ResourcePrefix: "/widgets",
	})
	require.NoError(tb, err)
	var backing storage.Interface = st
	for _, w := range wrap {
		backing = w(backing)
	}
	srv, err := server.New(server.Config{Resources: []server.Resource{{
		Group: "demo.listwatch.dev", Version: "v1", Plural: "widgets", Kind: "Widget", Namespaced: true,
		Storage: backing, KeyRoot: "/widgets", GetAttrs: widget.GetAttrs, SelectableFields: []string{"spec.nodeName"},
	}}})
	require.NoError(tb, err)
	f := &fixture{t: tb, store: st, srv: srv, ts: httptest.NewServer(srv), client: &http.Client{Transport: &http.Transport{}}}
	tb.Cleanup(func() {
		srv.Close()
		f.ts.Close()
		f.client.CloseIdleConnections()
		st.Close()
	})
	return f
}

// lw returns a ListerWatcher for namespace ns ("" for all).
func (f *fixture) lw(ns string, edit ...func(*Config)) *ListerWatcher {
	f.t.Helper()
	cfg := Config{BaseURL: f.ts.URL, Group: "demo.listwatch.dev", Version: "v1", Plural: "widgets",
		Namespace: ns, HTTPClient: f.client}
	for _, e := range edit {
		e(&cfg)
	}
	lw, err := New(cfg)
	require.NoError(f.t, err)
	return lw
}

// put creates or replaces a widget directly in storage and returns it.
func (f *fixture) put(ns, name string, labels map[string]string) *unstructured.Unstructured {
	f.t.Helper()
	ctx := testCtx(f.t)
	obj := widget.NewUnstructuredWidget(ns, name, labels)
	out := &unstructured.Unstructured{}
	key := "/widgets/" + ns + "/" + name
	err := f.store.Create(ctx, key, obj, out, 0)
	if storage.IsCode(err, storage.CodeKeyExists) {
		err = f.store.GuaranteedUpdate(ctx, key, out, false, nil, func(_ runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
			return obj.DeepCopy(), nil, nil
		}, nil, storage.UpdateOptions{})
	}
	require.NoError(f.t, err)
	return out
}

func testCtx(tb testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	tb.Cleanup(cancel)
	return ctx
}
