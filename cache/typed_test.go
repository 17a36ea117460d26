package cache_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/cache"
	"github.com/listwatch/listwatch/client"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/reflector"
)

// TestInformerOf: the typed view is the cache's one informer of the kind
// (same objects, same indexes, handlers on the same informer), typed; a
// type the kind does not decode into is refused.
func TestInformerOf(t *testing.T) {
	kinds, err := client.NewKinds(widget.Scheme)
	require.NoError(t, err)
	lists := 0
	var mu sync.Mutex
	base := staticLW(newWidget("a", "w1", nil, "n1"), newWidget("a", "w2", nil, "n2"), newWidget("b", "w3", nil, "n1"))
	lw := reflector.ListWatchFuncs{ListFunc: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
		mu.Lock()
		lists++
		mu.Unlock()
		return base.List(ctx, o)
	}, WatchFunc: base.Watch}
	c, err := cache.New(cache.Options{Kinds: kinds, ListerWatcher: func(client.Kind) (reflector.ListerWatcher, error) { return lw, nil }})
	require.NoError(t, err)

	typed, err := cache.InformerOf[*widget.Widget](c)
	require.NoError(t, err)
	again, err := cache.InformerOf[*widget.Widget](c)
	require.NoError(t, err)
	untyped, err := c.InformerFor(&widget.Widget{})
	require.NoError(t, err)
	require.NoError(t, typed.AddIndexers(reflector.Indexers[*widget.Widget]{"node": func(w *widget.Widget) ([]string, error) {
		return []string{w.Spec.NodeName}, nil
	}}))
	var added []string
	var addMu sync.Mutex
	reg, err := again.AddEventHandler(reflector.ResourceEventHandlerFuncs[*widget.Widget]{AddFunc: func(w *widget.Widget, _ bool) {
		addMu.Lock()
		added = append(added, w.Name)
		addMu.Unlock()
	}})
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c.Start(ctx)
	defer c.Shutdown()
	require.True(t, reflector.WaitForCacheSync(ctx, typed.HasSynced, reg.HasSynced))

	mu.Lock()
	require.Equal(t, 1, lists, "one informer, listed once")
	mu.Unlock()
	addMu.Lock()
	require.ElementsMatch(t, []string{"w1", "w2", "w3"}, added)
	addMu.Unlock()
	w, ok := typed.GetIndexer().GetByKey("a/w1")
	require.True(t, ok)
	shared, _ := untyped.GetIndexer().GetByKey("a/w1")
	require.Same(t, shared, client.Object(w), "the informer's own object, not a copy")
	onN1, err := typed.GetIndexer().ByIndex("node", "n1")
	require.NoError(t, err)
	require.Len(t, onN1, 2)
	byUntyped, err := untyped.GetIndexer().ByIndex("node", "n1")
	require.NoError(t, err)
	require.Len(t, byUntyped, 2, "the index is the informer's")
	require.Len(t, typed.GetStore().List(), 3)
	require.Equal(t, "10", typed.LastSyncResourceVersion())
	require.NoError(t, again.RemoveEventHandler(reg))

	_, err = cache.InformerOf[*unstructured.Unstructured](c)
	require.Error(t, err, "an unstructured object names no kind")
}

// TestInformerOfTypeMismatch: a kind whose informer holds another type
// than T (here unstructured objects) is refused with ErrTypeMismatch.
func TestInformerOfTypeMismatch(t *testing.T) {
	kinds, err := client.NewKinds(widget.Scheme)
	require.NoError(t, err)
	k, _ := kinds.Get(widget.GroupVersion.WithKind(widget.Kind))
	k.New = func() client.Object { return &unstructured.Unstructured{} }
	require.NoError(t, kinds.Add(k))
	c, err := cache.New(cache.Options{Kinds: kinds, ListerWatcher: func(client.Kind) (reflector.ListerWatcher, error) {
		return staticLW(), nil
	}})
	require.NoError(t, err)
	_, err = cache.InformerOf[*widget.Widget](c)
	require.ErrorIs(t, err, cache.ErrTypeMismatch)
	require.False(t, c.Serves(k), "no informer made")
}
