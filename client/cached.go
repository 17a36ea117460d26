package client

import (
	"context"
)

// Cache is what WithCache reads from: informer caches of some kinds, such
// as a manager's cache (package cache).
type Cache interface {
	Reader
	// Serves reports whether the cache holds (watches) kind.
	Serves(kind Kind) bool
}

// WithCache returns a Client that serves Get and List from cache for the
// kinds cache serves, and every write, every other read, paged lists
// (Limit, Continue) and reads with FromStorage from c. Cached reads may
// lag behind writes: a Reconcile sees its own write after the cache's
// informer has (a conflict on the next Update says it had not).
func WithCache(c Client, cache Cache) Client {
	return &cached{Client: c, cache: cache}
}

type cached struct {
	Client
	cache Cache
}

func (c *cached) Get(ctx context.Context, key ObjectKey, obj Object, opts ...GetOption) error {
	if !collect(opts, GetOption.ApplyToGet).FromStorage {
		if kind, err := c.Kinds().KindFor(obj); err == nil && c.cache.Serves(kind) {
			return c.cache.Get(ctx, key, obj, opts...)
		}
	}
	return c.Client.Get(ctx, key, obj, opts...)
}

func (c *cached) List(ctx context.Context, list ObjectList, opts ...ListOption) error {
	if o := collect(opts, ListOption.ApplyToList); !o.FromStorage && o.Limit <= 0 && o.Continue == "" {
		if kind, err := c.Kinds().KindFor(list); err == nil && c.cache.Serves(kind) {
			return c.cache.List(ctx, list, opts...)
		}
	}
	return c.Client.List(ctx, list, opts...)
}
