package registry_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/registry"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/storage/etcd3"
)

// etcdServer is the package's one embedded etcd; each test has its own
// key prefix.
var etcdServer *embedtest.Server

func TestMain(m *testing.M) { os.Exit(embedtest.RunMain(m, &etcdServer, embedtest.Options{})) }

// testCtx is a context that ends with the test, or after 30 s.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// newWidgetStore returns an etcd3 store of typed Widgets below the test's
// own emptied prefix.
func newWidgetStore(t *testing.T) *etcd3.Store {
	t.Helper()
	_, err := etcdServer.Client.Delete(testCtx(t), embedtest.Prefix(t), clientv3.WithPrefix())
	require.NoError(t, err)
	st, err := etcd3.New(etcd3.Config{Client: etcdServer.Client, Codec: widget.Codec,
		NewFunc: widget.New, NewListFunc: widget.NewList,
		Prefix: embedtest.Prefix(t), ResourcePrefix: widget.KeyRoot})
	require.NoError(t, err)
	t.Cleanup(st.Close)
	return st
}

// newRegistry returns a registry Store of Widgets over st.
func newRegistry(t *testing.T, st storage.Interface) *registry.Store {
	t.Helper()
	r, err := registry.New(registry.Config{Storage: st,
		Resource: widget.Resource.GroupResource(), Kind: widget.Kind})
	require.NoError(t, err)
	return r
}

// create stores a Widget through r and returns the stored object.
func create(t *testing.T, r *registry.Store, w *widget.Widget) *widget.Widget {
	t.Helper()
	out := &widget.Widget{}
	require.NoError(t, r.Create(testCtx(t), widget.Key(w.Namespace, w.Name), w, out, registry.CreateOptions{}))
	return out
}

// get reads the stored Widget namespace/name.
func get(t *testing.T, st storage.Interface, namespace, name string) (*widget.Widget, error) {
	t.Helper()
	out := &widget.Widget{}
	err := st.Get(testCtx(t), widget.Key(namespace, name), storage.GetOptions{}, out)
	return out, err
}
