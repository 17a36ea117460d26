package cacher

import (
	"context"

	"k8s.io/apimachinery/pkg/runtime"
)

// noteWrite records the RV of a write made through this cacher (obj is the
// object the storage returned), so that reads at RV "0" through it are not
// older than that write (see waitOwnWrites).
func (f *feed) noteWrite(obj runtime.Object) {
	if obj == nil {
		return
	}
	rv, err := f.cfg.Versioner.ObjectResourceVersion(obj)
	if err != nil || rv == 0 {
		return
	}
	for {
		cur := f.writtenRV.Load()
		if rv <= cur || f.writtenRV.CompareAndSwap(cur, rv) {
			return
		}
	}
}

// waitOwnWrites lets a read at RV "0" (any state allowed) see every write
// made through this cacher that completed before it: it waits until the
// cache holds the newest of them, usually a few milliseconds. RV "0" still
// promises nothing more, so after FreshWaitTimeout the read is served from
// whatever the cache holds; only the context ending is an error.
func (f *feed) waitOwnWrites(ctx context.Context) error {
	want := f.writtenRV.Load()
	if cur, ready := f.cache.RV(); want == 0 || (ready && cur >= want) {
		return nil
	}
	// Every write through the cacher is an event of the cache's own watch:
	// no progress notification is needed (or wanted: it would move the
	// cache past the write, which RV "0" does not ask for).
	wait, cancel := context.WithTimeout(ctx, f.cfg.FreshWaitTimeout)
	defer cancel()
	if err := f.cache.WaitUntilFresh(wait, want); err != nil && ctx.Err() != nil {
		return err
	}
	return nil
}
