package cacher

import (
	"context"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/watchcache"
)

// revisionBatch gathers the events of one storage revision until the
// revision is known to be complete.
type revisionBatch struct {
	// whole: the storage marks revision ends (a BOOKMARK annotated with
	// storage.RevisionEndAnnotationKey), so revisions are applied whole.
	// Until the first mark, events are applied one by one and the cache
	// finds revision ends itself.
	whole  bool
	rv     uint64
	events []watch.Event
}

// isRevisionEnd reports whether a bookmark marks the end of a revision.
func isRevisionEnd(obj runtime.Object) bool {
	a, err := meta.Accessor(obj)
	return err == nil && a.GetAnnotations()[storage.RevisionEndAnnotationKey] == "true"
}

// applyRevision applies the gathered revision to the cache, marks the cache
// as holding it completely, and only then queues its events to the
// watchers, all in one hub commit: a revision becomes visible to reads and
// to watchers at once, so a read at RV "0" is never older than an event
// any watcher of this cacher has received. Objects in it the cache cannot
// hold are left out and their keys served by the storage (see
// feed_uncacheable.go); the revision is applied all the same.
func (c *Cacher) applyRevision(ctx context.Context, b *revisionBatch) error {
	var bad *uncacheableFound
	if cur, _ := c.cache.RV(); b.rv > cur { // not a replay the cache ignores
		var err error
		if b.events, bad, err = c.splitUncacheable(ctx, b.events, b.rv); err != nil {
			return err
		}
	}
	return c.hub.commit(func(tx hubTx) error {
		stale, err := c.markUncacheable(tx, bad, b.rv)
		if err != nil {
			return err
		}
		b.events = append(b.events, stale...)
		return c.applyRevisionLocked(tx, b)
	})
}

// applyRevisionLocked is applyRevision inside the hub's commit.
func (c *Cacher) applyRevisionLocked(tx hubTx, b *revisionBatch) error {
	evs := make([]*watchcache.Event, 0, len(b.events))
	drop := c.dropEvent.Load()
	for _, e := range b.events {
		if drop != nil && (*drop)(e.Type, e.Object) {
			continue
		}
		ev, err := c.cache.Apply(e.Type, e.Object, b.rv)
		if err != nil {
			return err
		}
		if ev != nil {
			c.readableAgain(ev.Key())
			evs = append(evs, ev)
		}
	}
	clear(b.events)
	b.events = b.events[:0]
	c.cache.UpdateRV(b.rv)
	// The metric follows the cache's RV before any watcher can see the
	// revision's events, so whoever saw an event reads an RV at least as new.
	c.cfg.Metrics.CacheResourceVersion(b.rv)
	for _, ev := range evs {
		c.cfg.Metrics.EventReceived(tx.dispatch(ev))
	}
	return nil
}
