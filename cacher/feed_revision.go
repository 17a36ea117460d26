package cacher

import (
	"context"

	"github.com/listwatch/listwatch/cacher/internal/history"
	"github.com/listwatch/listwatch/cacher/internal/hub"
	"github.com/listwatch/listwatch/watchcache"
)

// applyRevision applies the gathered revision to the cache, marks the cache
// as holding it completely, and only then publishes its events to the
// watchers, all in one hub commit: a revision becomes visible to reads and
// to watchers at once, so a read at RV "0" is never older than an event
// any watcher of this cacher has received. Objects in it the cache cannot
// hold are left out and their keys served by the storage (see
// feed_uncacheable.go); the revision is applied all the same.
func (f *feed) applyRevision(ctx context.Context, b *history.Revision) error {
	var bad *uncacheableFound
	if cur, _ := f.cache.RV(); b.RV > cur { // not a replay the cache ignores
		var err error
		if b.Events, bad, err = f.splitUncacheable(ctx, b.Events, b.RV); err != nil {
			return err
		}
	}
	return f.hub.Commit(func(tx hub.Tx) error {
		stale, err := f.markUncacheable(tx, bad, b.RV)
		if err != nil {
			return err
		}
		b.Events = append(b.Events, stale...)
		return f.applyRevisionLocked(tx, b)
	})
}

// applyRevisionLocked is applyRevision inside the hub's commit.
func (f *feed) applyRevisionLocked(tx hub.Tx, b *history.Revision) error {
	evs := make([]*watchcache.Event, 0, len(b.Events))
	drop := f.dropEvent.Load()
	for _, e := range b.Events {
		if drop != nil && (*drop)(e.Type, e.Object) {
			continue
		}
		ev, err := f.cache.Apply(e.Type, e.Object, b.RV)
		if err != nil {
			return err
		}
		if ev != nil {
			f.readableAgain(ev.Key())
			evs = append(evs, ev)
		}
	}
	b.Reset()
	f.cache.UpdateRV(b.RV)
	// The metric follows the cache's RV before any watcher can see the
	// revision's events, so whoever saw an event reads an RV at least as new.
	f.cfg.Metrics.CacheResourceVersion(b.RV)
	for _, ev := range evs {
		f.cfg.Metrics.EventReceived(tx.Dispatch(ev))
	}
	return nil
}
