package main

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/listwatch/cache"
	"github.com/listwatch/listwatch/client"
	"github.com/listwatch/listwatch/gc"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/registry"
)

// startCollector runs a garbage collector (package gc) for the widgets
// the stack serves, in process over its cacher, until the returned stop is
// called: deletes with a propagation policy (kubectl --cascade) complete,
// and widgets whose owners are gone are deleted.
func startCollector(s *stack, logger *slog.Logger) (stop func(), err error) {
	kinds, _ := client.NewKinds() // no scheme: cannot fail
	gvk := schema.GroupVersionKind{Group: group, Version: version, Kind: kind}
	if err := kinds.Add(client.Kind{GroupVersionKind: gvk, Resource: plural, Namespaced: true, KeyRoot: keyRoot}); err != nil {
		return nil, err
	}
	widgets, _ := kinds.Get(gvk)
	reg, err := registry.New(registry.Config{Storage: s.cacher, Resource: widgets.GroupVersionResource().GroupResource(), Kind: kind})
	if err != nil {
		return nil, err
	}
	c, err := client.NewLocal(client.LocalConfig{Kinds: kinds, Store: func(client.Kind) (*registry.Store, error) { return reg, nil }})
	if err != nil {
		return nil, err
	}
	ch, err := cache.New(cache.Options{Kinds: kinds, Logger: logger, ListerWatcher: func(k client.Kind) (reflector.ListerWatcher, error) {
		return reflector.NewStorageListerWatcher(s.cacher, k.KeyRoot, func() runtime.Object { return k.NewList() }, "",
			reflector.WithAttrFunc(k.GetAttrs)), nil
	}})
	if err != nil {
		return nil, err
	}
	collector, err := gc.New(gc.Config{Client: c, Cache: ch, Kinds: kinds.All(), Logger: logger,
		Registerer: s.metrics})
	if err != nil {
		return nil, fmt.Errorf("garbage collector: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ch.Start(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := collector.Start(ctx); err != nil {
			logger.Error("garbage collector stopped", "err", err)
		}
	})
	return func() {
		cancel()
		wg.Wait()
		ch.Shutdown()
	}, nil
}
