package cacher

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/watchcache"
)

// The feed's side of the watchers: *Cacher is their watchSource (see
// watcher_env.go), reading the cache the feed writes, the shared gap of its
// last relist, and the storage through the catch-up slots.

var _ watchSource = (*Cacher)(nil)

func (c *Cacher) eventsSince(pos uint64, limit int) ([]*watchcache.Event, uint64, error) {
	return c.cache.EventsSince(pos, limit)
}

func (c *Cacher) cacheRV() uint64 {
	rv, _ := c.cache.RV()
	return rv
}

// cacheHolds reports whether the cache can replay every event after rv
// (it is ready, its content can be trusted, and its history reaches rv).
func (c *Cacher) cacheHolds(rv uint64) bool {
	_, ready := c.cache.RV()
	return ready && c.trusted() && c.cache.Oldest() <= rv
}

func (c *Cacher) sharedGap() *gapHistory { return c.gap.Load() }

func (c *Cacher) sharedBehind(pos uint64) *gapHistory { return c.behindGap(pos) }

func (c *Cacher) storageWatch(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	return c.store.Watch(ctx, key, opts)
}

// acquireSlot takes a catch-up stream slot, waiting at most timeout (0:
// until ctx ends).
func (c *Cacher) acquireSlot(ctx context.Context, timeout time.Duration) bool {
	select {
	case c.catchUpSlots <- struct{}{}:
		return true
	default:
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	select {
	case c.catchUpSlots <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func (c *Cacher) releaseSlot(held bool) {
	if held {
		<-c.catchUpSlots
	}
}

// objectRV reads an object's RV, 0 when it has none.
func (c *Cacher) objectRV(obj runtime.Object) uint64 {
	rv, err := c.cfg.Versioner.ObjectResourceVersion(obj)
	if err != nil {
		return 0
	}
	return rv
}
