package client_test

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/client"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/registry"
	"github.com/listwatch/listwatch/server"
	"github.com/listwatch/listwatch/storage/etcd3"
)

// newKinds returns the Widget and Part kinds, Widgets with their
// selectable field spec.nodeName.
func newKinds(t *testing.T) *client.Kinds {
	t.Helper()
	kinds, err := client.NewKinds(widget.Scheme)
	require.NoError(t, err)
	w, ok := kinds.Get(widget.GroupVersion.WithKind(widget.Kind))
	require.True(t, ok)
	w.GetAttrs = widget.GetAttrs
	require.NoError(t, kinds.Add(w))
	return kinds
}

// testPrefix returns a fresh etcd prefix for t.
func testPrefix(t *testing.T) string {
	return "/" + strings.ReplaceAll(t.Name(), "/", "_") + "-" + time.Now().Format("150405.000000")
}

// newStore returns an etcd3 store of kind under prefix, closed at cleanup.
func newStore(t *testing.T, prefix string, kind client.Kind, unstructured bool) *etcd3.Store {
	t.Helper()
	cfg := etcd3.Config{Client: etcd.Client, Codec: kind.Codec, NewFunc: func() runtime.Object { return kind.New() },
		NewListFunc: kind.NewList, Prefix: prefix, ResourcePrefix: kind.KeyRoot}
	if unstructured {
		cfg.Codec, cfg.NewFunc, cfg.NewListFunc = widget.UnstructuredCodec, widget.NewUnstructured, widget.NewUnstructuredList
	}
	s, err := etcd3.New(cfg)
	require.NoError(t, err)
	t.Cleanup(s.Close)
	return s
}

// newLocal returns an in-process client over fresh stores.
func newLocal(t *testing.T) client.Client { return newLocalOf(t, newKinds(t)) }

// newLocalOf returns an in-process client of kinds over fresh stores.
func newLocalOf(t *testing.T, kinds *client.Kinds) client.Client {
	t.Helper()
	prefix := testPrefix(t)
	regs := map[string]*registry.Store{}
	for _, k := range kinds.All() {
		reg, err := registry.New(registry.Config{Storage: newStore(t, prefix, k, false),
			Resource: k.GroupVersionResource().GroupResource(), Kind: k.GroupVersionKind.Kind})
		require.NoError(t, err)
		regs[k.GroupVersionKind.Kind] = reg
	}
	c, err := client.NewLocal(client.LocalConfig{Kinds: kinds, Store: func(k client.Kind) (*registry.Store, error) {
		return regs[k.GroupVersionKind.Kind], nil
	}})
	require.NoError(t, err)
	return c
}

// newHTTP returns an HTTP client of a server over fresh stores, with
// Widget's status subresource.
func newHTTP(t *testing.T) client.Client { return newHTTPOf(t, newKinds(t)) }

// newHTTPOf returns an HTTP client of a server of kinds over fresh
// stores.
func newHTTPOf(t *testing.T, kinds *client.Kinds) client.Client {
	t.Helper()
	c, err := client.NewHTTP(client.HTTPConfig{BaseURL: serve(t, kinds), Kinds: kinds})
	require.NoError(t, err)
	return c
}

// serve starts a server of kinds over fresh stores and returns its URL.
func serve(t *testing.T, kinds *client.Kinds) string {
	t.Helper()
	prefix := testPrefix(t)
	var resources []server.Resource
	for _, k := range kinds.All() {
		r := server.Resource{Group: k.GroupVersionKind.Group, Version: k.GroupVersionKind.Version,
			Plural: k.Resource, Kind: k.GroupVersionKind.Kind, Namespaced: k.Namespaced,
			Storage: newStore(t, prefix, k, true), KeyRoot: k.KeyRoot, GetAttrs: k.GetAttrs,
			Subresources: &server.Subresources{Status: true}}
		if k.GroupVersionKind.Kind == widget.Kind {
			r.SelectableFields = widget.SelectableFields
		}
		resources = append(resources, r)
	}
	srv, err := server.New(server.Config{Resources: resources})
	require.NoError(t, err)
	hs := httptest.NewServer(srv)
	t.Cleanup(func() { hs.Close(); srv.Close() })
	return hs.URL
}

// implementations are the clients every test of the table runs against.
var implementations = []struct {
	name string
	new  func(t *testing.T) client.Client
	of   func(t *testing.T, kinds *client.Kinds) client.Client
}{
	{"local", newLocal, newLocalOf},
	{"http", newHTTP, newHTTPOf},
}
