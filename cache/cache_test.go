package cache_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/cache"
	"github.com/listwatch/listwatch/client"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/reflector"
)

// staticLW lists a fixed set of Widgets and then watches nothing.
func staticLW(items ...widget.Widget) reflector.ListerWatcher {
	return reflector.ListWatchFuncs{
		ListFunc: func(context.Context, metav1.ListOptions) (runtime.Object, error) {
			return &widget.WidgetList{ListMeta: metav1.ListMeta{ResourceVersion: "10"}, Items: items}, nil
		},
		WatchFunc: func(ctx context.Context, _ metav1.ListOptions) (watch.Interface, error) {
			return watch.NewEmptyWatch(), nil
		},
	}
}

func newWidget(ns, name string, labels map[string]string, node string) widget.Widget {
	w := widget.NewWidget(ns, name)
	w.Labels, w.Spec.NodeName, w.ResourceVersion = labels, node, "5"
	return *w
}

// TestCacheReads: Get and List serve copies of the informer's objects,
// filtered by namespace, labels and fields, into typed and unstructured
// objects; reads fail before Start and after Shutdown.
func TestCacheReads(t *testing.T) {
	kinds, err := client.NewKinds(widget.Scheme)
	require.NoError(t, err)
	k, _ := kinds.Get(widget.GroupVersion.WithKind(widget.Kind))
	k.GetAttrs = widget.GetAttrs
	require.NoError(t, kinds.Add(k))
	lw := staticLW(newWidget("a", "w1", map[string]string{"app": "x"}, "n1"),
		newWidget("a", "w2", map[string]string{"app": "y"}, "n2"), newWidget("b", "w3", map[string]string{"app": "x"}, "n2"))
	c, err := cache.New(cache.Options{Kinds: kinds, ListerWatcher: func(client.Kind) (reflector.ListerWatcher, error) { return lw, nil }})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	require.ErrorIs(t, c.Get(ctx, client.Key("a", "w1"), &widget.Widget{}), cache.ErrNotStarted)
	require.False(t, c.Serves(k), "no informer before first use")
	_, err = c.InformerFor(&widget.Widget{})
	require.NoError(t, err)
	require.True(t, c.Serves(k))
	require.Equal(t, []string{"widgets.v1.demo.listwatch.dev"}, c.Unsynced(), "an informer not started has not synced")
	c.Start(ctx)
	require.True(t, c.WaitForCacheSync(ctx))
	require.Empty(t, c.Unsynced())

	var w widget.Widget
	require.NoError(t, c.Get(ctx, client.Key("a", "w1"), &w))
	require.Equal(t, "n1", w.Spec.NodeName)
	w.Spec.NodeName = "changed"
	var again widget.Widget
	require.NoError(t, c.Get(ctx, client.Key("a", "w1"), &again))
	require.Equal(t, "n1", again.Spec.NodeName, "a read is a copy")
	require.True(t, client.IsNotFound(c.Get(ctx, client.Key("a", "nope"), &w)))

	names := func(l *widget.WidgetList) []string {
		var out []string
		for _, i := range l.Items {
			out = append(out, i.Name)
		}
		return out
	}
	var list widget.WidgetList
	require.NoError(t, c.List(ctx, &list, client.InNamespace("a")))
	require.ElementsMatch(t, []string{"w1", "w2"}, names(&list))
	require.Equal(t, "10", list.ResourceVersion)
	require.NoError(t, c.List(ctx, &list, client.MatchingLabels{"app": "x"}))
	require.ElementsMatch(t, []string{"w1", "w3"}, names(&list))
	require.NoError(t, c.List(ctx, &list, client.InNamespace("a"), client.MatchingFields{"spec.nodeName": "n2"}))
	require.ElementsMatch(t, []string{"w2"}, names(&list))

	u := &unstructured.UnstructuredList{}
	u.SetGroupVersionKind(widget.GroupVersion.WithKind(widget.Kind + "List"))
	require.NoError(t, c.List(ctx, u, client.InNamespace("b")))
	require.Len(t, u.Items, 1)
	require.Equal(t, "w3", u.Items[0].GetName())

	c.Shutdown()
	require.ErrorIs(t, c.List(ctx, &list), cache.ErrStopped)
}

// TestIndexField: a List selecting an indexed field reads its index, in a
// namespace or in all, also for a field GetAttrs does not return, and
// together with other selectors.
func TestIndexField(t *testing.T) {
	kinds, err := client.NewKinds(widget.Scheme) // default GetAttrs: no spec.color
	require.NoError(t, err)
	colored := func(ns, name, color string) widget.Widget {
		w := newWidget(ns, name, map[string]string{"app": name}, "")
		w.Spec.Color = color
		return w
	}
	lw := staticLW(colored("a", "w1", "red"), colored("a", "w2", "blue"), colored("b", "w3", "red"))
	c, err := cache.New(cache.Options{Kinds: kinds, ListerWatcher: func(client.Kind) (reflector.ListerWatcher, error) { return lw, nil }})
	require.NoError(t, err)
	require.NoError(t, c.IndexField(&widget.Widget{}, "spec.color", func(o client.Object) []string {
		return []string{o.(*widget.Widget).Spec.Color}
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c.Start(ctx)
	defer c.Shutdown()
	require.True(t, c.WaitForCacheSync(ctx))

	list := func(opts ...client.ListOption) []string {
		var l widget.WidgetList
		require.NoError(t, c.List(ctx, &l, opts...))
		var out []string
		for _, i := range l.Items {
			out = append(out, i.Name)
		}
		return out
	}
	require.ElementsMatch(t, []string{"w1", "w3"}, list(client.MatchingFields{"spec.color": "red"}))
	require.ElementsMatch(t, []string{"w1"}, list(client.InNamespace("a"), client.MatchingFields{"spec.color": "red"}))
	require.ElementsMatch(t, []string{"w3"}, list(client.MatchingFields{"spec.color": "red", "metadata.name": "w3"}))
	require.ElementsMatch(t, []string{"w1"}, list(client.MatchingFields{"spec.color": "red"}, client.MatchingLabels{"app": "w1"}))
	require.Empty(t, list(client.InNamespace("b"), client.MatchingFields{"spec.color": "blue"}))
}
