package main

import (
	"context"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/storage"
)

// countingStorage counts the reads and watches that reach etcd through the
// store below the cacher, so the walkthrough can show which requests the
// cache absorbed.
type countingStorage struct {
	storage.Interface
	gets, lists, watches atomic.Int64
}

func (c *countingStorage) Get(ctx context.Context, key string, opts storage.GetOptions, out runtime.Object) error {
	c.gets.Add(1)
	return c.Interface.Get(ctx, key, opts, out)
}

func (c *countingStorage) GetList(ctx context.Context, key string, opts storage.ListOptions, out runtime.Object) error {
	c.lists.Add(1)
	return c.Interface.GetList(ctx, key, opts, out)
}

func (c *countingStorage) Watch(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	c.watches.Add(1)
	return c.Interface.Watch(ctx, key, opts)
}

// reads returns the reads and watches that reached etcd so far.
func (c *countingStorage) reads() int64 {
	return c.gets.Load() + c.lists.Load() + c.watches.Load()
}
