package cache_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/cache"
	"github.com/listwatch/listwatch/client"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/reflector"
)

// TestCacheClusterScoped: a cluster-scoped kind is read from the cache
// without a namespace; a namespace given for it is the client's Bad
// Request, as from storage.
func TestCacheClusterScoped(t *testing.T) {
	kinds, err := client.NewKinds(widget.Scheme)
	require.NoError(t, err)
	require.NoError(t, kinds.SetClusterScoped(&widget.Widget{}))
	lw := staticLW(newWidget("", "w1", nil, "n1"), newWidget("", "w2", nil, "n2"))
	c, err := cache.New(cache.Options{Kinds: kinds, ListerWatcher: func(client.Kind) (reflector.ListerWatcher, error) { return lw, nil }})
	require.NoError(t, err)
	defer c.Shutdown()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err = c.InformerFor(&widget.WidgetList{})
	require.NoError(t, err)
	c.Start(ctx)
	require.True(t, c.WaitForCacheSync(ctx))

	var w widget.Widget
	require.NoError(t, c.Get(ctx, client.Key("", "w1"), &w))
	assert.Equal(t, "n1", w.Spec.NodeName)
	var list widget.WidgetList
	require.NoError(t, c.List(ctx, &list))
	assert.Len(t, list.Items, 2)

	for _, err := range []error{c.Get(ctx, client.Key("a", "w1"), &w), c.List(ctx, &list, client.InNamespace("a"))} {
		assert.ErrorIs(t, err, client.ErrNamespaceOfClusterScoped)
		assert.True(t, client.IsBadRequest(err), "%v", err)
	}
}
