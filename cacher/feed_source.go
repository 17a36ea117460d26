package cacher

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/cacher/internal/watcher"
	"github.com/listwatch/listwatch/watchcache"
)

// The feed's side of the watchers: *feed is their watcher.Source,
// reading the cache the feed writes and the shared reads of the storage's
// history (feed_history.go), and keeping the catch-up slots.

var _ watcher.Source = (*feed)(nil)

func (f *feed) EventsSince(pos uint64, limit int) ([]*watchcache.Event, uint64, error) {
	return f.cache.EventsSince(pos, limit)
}

func (f *feed) CacheRV() uint64 {
	rv, _ := f.cache.RV()
	return rv
}

// CacheHolds reports whether the cache can replay every event after rv
// (it is ready, its content can be trusted, its history reaches rv, and
// etcd has not compacted rv: then etcd's answer, 410, is the watch's).
func (f *feed) CacheHolds(rv uint64) bool {
	_, ready := f.cache.RV()
	return ready && f.trusted() && f.cache.Oldest() <= rv && rv >= f.cache.Compacted()
}

// StorageRV is the storage's current revision, shared with the reads that
// ask at the same time.
func (f *feed) StorageRV(ctx context.Context) (uint64, error) { return f.currentRV(ctx) }

// AcquireSlot takes a catch-up slot for a new watch from etcd's history,
// waiting at most timeout.
func (f *feed) AcquireSlot(ctx context.Context, timeout time.Duration) bool {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	select {
	case f.catchUpSlots <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

// ReleaseSlot gives back a catch-up slot if held.
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
