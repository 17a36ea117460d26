package cacher

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/cacher/internal/watcher"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/watchcache"
)

// The feed's side of the watchers: *feed is their watcher.Source,
// reading the cache the feed writes, the shared gap of its last relist,
// and the storage through the catch-up slots.

var _ watcher.Source = (*feed)(nil)

func (f *feed) EventsSince(pos uint64, limit int) ([]*watchcache.Event, uint64, error) {
	return f.cache.EventsSince(pos, limit)
}

func (f *feed) CacheRV() uint64 {
	rv, _ := f.cache.RV()
	return rv
}

// CacheHolds reports whether the cache can replay every event after rv
// (it is ready, its content can be trusted, and its history reaches rv).
func (f *feed) CacheHolds(rv uint64) bool {
	_, ready := f.cache.RV()
	return ready && f.trusted() && f.cache.Oldest() <= rv
}

func (f *feed) StorageWatch(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	return f.store.Watch(ctx, key, opts)
}

// AcquireSlot takes a catch-up stream slot, waiting at most timeout (0:
// until ctx ends).
func (f *feed) AcquireSlot(ctx context.Context, timeout time.Duration) bool {
	select {
	case f.catchUpSlots <- struct{}{}:
		return true
	default:
	}
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	select {
	case f.catchUpSlots <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func (f *feed) ReleaseSlot(held bool) {
	if held {
		<-f.catchUpSlots
	}
}

// objectRV reads an object's RV, 0 when it has none.
func (f *feed) objectRV(obj runtime.Object) uint64 {
	rv, err := f.cfg.Versioner.ObjectResourceVersion(obj)
	if err != nil {
		return 0
	}
	return rv
}
