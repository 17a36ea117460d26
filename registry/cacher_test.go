package registry_test

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/registry"
	"github.com/listwatch/listwatch/storage"
)

// Writes through a registry over a cacher get the same metadata, and the
// cacher serves it: what an in-process controller reads back.
func TestThroughCacher(t *testing.T) {
	st := newWidgetStore(t)
	c, err := cacher.New(cacher.Config{Storage: st, ResourcePrefix: widget.KeyRoot,
		NewFunc: widget.New, NewListFunc: widget.NewList, KeyFunc: widget.KeyOf, GetAttrs: widget.GetAttrs})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(testCtx(t))
	var running sync.WaitGroup
	defer func() { cancel(); running.Wait() }()
	running.Go(func() { _ = c.Run(ctx) })
	require.NoError(t, c.WaitReady(ctx))

	r := newRegistry(t, c)
	created := create(t, r, widget.NewWidget("default", "w1"))
	require.NotEmpty(t, created.UID)
	out := &widget.Widget{}
	_, err = r.Update(ctx, widget.Key("default", "w1"), out, registry.UpdateOptions{}, func(cur runtime.Object) (runtime.Object, error) {
		cur.(*widget.Widget).Spec.Replicas = 4
		return cur, nil
	})
	require.NoError(t, err)

	rv, err := storage.ParseRV(out.ResourceVersion)
	require.NoError(t, err)
	cached := &widget.Widget{}
	require.NoError(t, c.Get(ctx, widget.Key("default", "w1"), storage.GetOptions{ResourceVersion: rv}, cached))
	assert.Equal(t, created.UID, cached.UID)
	assert.Equal(t, int64(2), cached.Generation)
	assert.False(t, cached.CreationTimestamp.IsZero())
}
