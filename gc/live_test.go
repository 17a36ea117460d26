package gc_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/cache"
	"github.com/listwatch/listwatch/client"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/gc"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/registry"
	"github.com/listwatch/listwatch/storage/etcd3"
)

// TestOwnerLookedUpLive: an owner the collector's cache does not hold (here
// a Widget its informer never lists, by a label selector; in life one
// created a moment ago) is looked up in storage before its dependent is
// judged: the dependent keeps it, and loses only the reference to an
// owner that is really gone. Built without a manager: a Collector over a
// cache and a local client of its own.
func TestOwnerLookedUpLive(t *testing.T) {
	kinds, err := client.NewKinds(widget.Scheme)
	require.NoError(t, err)
	prefix := testPrefix(t)
	regs := map[string]*registry.Store{}
	stores := map[string]*etcd3.Store{}
	for _, k := range kinds.All() {
		st, err := etcd3.New(etcd3.Config{Client: etcd.Client, Codec: k.Codec, NewFunc: func() runtime.Object { return k.New() },
			NewListFunc: func() runtime.Object { return k.NewList() }, Prefix: prefix, ResourcePrefix: k.KeyRoot})
		require.NoError(t, err)
		t.Cleanup(st.Close)
		reg, err := registry.New(registry.Config{Storage: st, Resource: k.GroupVersionResource().GroupResource(),
			Kind: k.GroupVersionKind.Kind})
		require.NoError(t, err)
		regs[k.GroupVersionKind.Kind], stores[k.GroupVersionKind.Kind] = reg, st
	}
	c, err := client.NewLocal(client.LocalConfig{Kinds: kinds, Store: func(k client.Kind) (*registry.Store, error) {
		return regs[k.GroupVersionKind.Kind], nil
	}})
	require.NoError(t, err)
	ch, err := cache.New(cache.Options{Kinds: kinds, ListerWatcher: func(k client.Kind) (reflector.ListerWatcher, error) {
		lw := reflector.NewStorageListerWatcher(stores[k.GroupVersionKind.Kind], k.KeyRoot,
			func() runtime.Object { return k.NewList() }, "", reflector.WithAttrFunc(k.GetAttrs))
		return reflector.TweakListOptions(lw, func(o *metav1.ListOptions) { o.LabelSelector = "hidden!=true" }), nil
	}})
	require.NoError(t, err)
	g, err := gc.New(gc.Config{Client: c, Cache: ch, Kinds: kinds.All()})
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	runCtx, stop := context.WithCancel(ctx)
	ch.Start(runCtx)
	done := make(chan error, 1)
	go func() { done <- g.Start(runCtx) }()
	defer func() {
		stop()
		require.NoError(t, <-done)
		ch.Shutdown()
	}()

	hidden := widget.NewWidget("default", "hidden").WithLabels(map[string]string{"hidden": "true"})
	require.NoError(t, c.Create(ctx, hidden))
	gone := metav1.OwnerReference{APIVersion: widget.GroupVersion.String(), Kind: widget.Kind, Name: "gone", UID: fakeUID("000000000004")}
	p := &widget.Part{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p",
		OwnerReferences: refs(ref(widget.Kind, hidden, true), gone)}}
	require.NoError(t, c.Create(ctx, p))
	require.Eventually(t, func() bool {
		var got widget.Part
		require.NoError(t, c.Get(ctx, client.KeyOf(p), &got))
		return len(got.OwnerReferences) == 1 && got.OwnerReferences[0].UID == hidden.UID
	}, waitFor, 5*time.Millisecond, "the Part keeps its live owner and drops the gone one")
}
