package cache_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/cache"
	"github.com/listwatch/listwatch/client"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/reflector"
)

// startedCache returns a started, synced cache of widgets listing items.
func startedCache(tb testing.TB, items ...widget.Widget) (*cache.Cache, *cache.Informer) {
	tb.Helper()
	kinds, err := client.NewKinds(widget.Scheme)
	require.NoError(tb, err)
	static := staticLW(items...)
	lw := reflector.ListWatchFuncs{ListFunc: static.List, // and a watch that stays open, quiet
		WatchFunc: func(context.Context, metav1.ListOptions) (watch.Interface, error) { return watch.NewFake(), nil }}
	c, err := cache.New(cache.Options{Kinds: kinds, ListerWatcher: func(client.Kind) (reflector.ListerWatcher, error) { return lw, nil }})
	require.NoError(tb, err)
	inf, err := c.InformerFor(&widget.Widget{})
	require.NoError(tb, err)
	ctx, cancel := context.WithCancel(context.Background())
	c.Start(ctx)
	tb.Cleanup(func() { cancel(); c.Shutdown() })
	sync, stop := context.WithTimeout(ctx, 10*time.Second)
	defer stop()
	require.True(tb, c.WaitForCacheSync(sync))
	return c, inf
}

// sameMap reports whether a and b are the same map (not equal copies).
func sameMap(a, b map[string]string) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// TestUnsafeDisableDeepCopy: with the option, Get and List hand out the
// cache's own objects (their maps are the cached object's); without it,
// copies; an unstructured list of a typed cache is converted (copied)
// either way.
func TestUnsafeDisableDeepCopy(t *testing.T) {
	c, inf := startedCache(t, newWidget("a", "w1", map[string]string{"app": "x"}, "n1"))
	ctx := context.Background()
	cached, ok := inf.GetStore().GetByKey("a/w1")
	require.True(t, ok)

	var w widget.Widget
	require.NoError(t, c.Get(ctx, client.Key("a", "w1"), &w))
	require.False(t, sameMap(cached.GetLabels(), w.Labels), "a copy by default")
	require.NoError(t, c.Get(ctx, client.Key("a", "w1"), &w, client.UnsafeDisableDeepCopy))
	require.True(t, sameMap(cached.GetLabels(), w.Labels), "the cache's own maps")

	var l widget.WidgetList
	require.NoError(t, c.List(ctx, &l))
	require.Len(t, l.Items, 1)
	require.False(t, sameMap(cached.GetLabels(), l.Items[0].Labels), "copies by default")
	require.NoError(t, c.List(ctx, &l, client.UnsafeDisableDeepCopy, client.MatchingLabels{"app": "x"}))
	require.Len(t, l.Items, 1)
	require.True(t, sameMap(cached.GetLabels(), l.Items[0].Labels), "the cache's own objects")
	require.Equal(t, "10", l.ResourceVersion)
	require.NoError(t, c.List(ctx, &l, client.UnsafeDisableDeepCopy, client.MatchingLabels{"app": "y"}))
	require.Empty(t, l.Items, "selectors apply")
}

// BenchmarkCacheList: a List of 1,000 widgets from the cache, copied (the
// default) and with client.UnsafeDisableDeepCopy.
func BenchmarkCacheList(b *testing.B) {
	items := make([]widget.Widget, 1000)
	for i := range items {
		items[i] = newWidget("ns", fmt.Sprintf("w%04d", i), map[string]string{"app": "bench", "i": fmt.Sprint(i)}, "n1")
	}
	c, _ := startedCache(b, items...)
	ctx := context.Background()
	for _, bc := range []struct {
		name string
		opts []client.ListOption
	}{{"copy", nil}, {"UnsafeDisableDeepCopy", []client.ListOption{client.UnsafeDisableDeepCopy}}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var l widget.WidgetList
				if err := c.List(ctx, &l, bc.opts...); err != nil {
					b.Fatal(err)
				}
				if len(l.Items) != len(items) {
					b.Fatalf("%d items", len(l.Items))
				}
			}
		})
	}
}
