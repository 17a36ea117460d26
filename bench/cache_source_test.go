package bench

import (
	"context"
	"fmt"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
)

// newCache starts a cacher over backend and waits until it has loaded the
// objects; stop ends it and waits for its goroutines. The cacher indexes the
// label app and the field spec.nodeName, as a user of this workload would.
func newCache(ctx context.Context, backend storage.Interface) (storage.Interface, func(), error) {
	c, stop, err := runCacher(ctx, cacher.Config{
		Storage:        backend,
		ResourcePrefix: resourcePrefix,
		NewFunc:        widget.New,
		NewListFunc:    widget.NewList,
		GetAttrs:       widget.GetAttrs,
		IndexLabels:    []string{"app"},
		IndexFields:    []string{"spec.nodeName"},
	})
	if err != nil {
		return nil, nil, err
	}
	return c, stop, nil
}

// runCacher builds a cacher from cfg, runs it and waits until it has loaded
// the objects; stop ends it and waits for its goroutines.
func runCacher(ctx context.Context, cfg cacher.Config) (*cacher.Cacher, func(), error) {
	c, err := cacher.New(cfg)
	if err != nil {
		return nil, nil, err
	}
	runCtx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(runCtx) }()
	stop := func() {
		cancel()
		<-done
	}
	if err := c.WaitReady(ctx); err != nil {
		stop()
		return nil, nil, fmt.Errorf("cacher not ready: %w", err)
	}
	return c, stop, nil
}
