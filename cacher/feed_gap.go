package cacher

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/watchcache"
)

// One catch-up for everyone. A relist replaces the cache's content at the
// list's revision, and every watcher in live dispatch is left at the
// revision the cache held before: the events between the two are in no
// cache. Rather than one storage watch per watcher (MaxCatchUpStreams at a
// time), the cacher forks the state it replaces (watchcache.Cache.Fork,
// O(1)) and applies to it the storage's history between the two revisions,
// read once through one storage watch (feedGap). Each lagging watcher
// replays that shared history, filtered by its own predicate as live
// events are, and then moves on to the new cache, which holds every event
// after the list. A watcher the shared history cannot serve (it was
// further behind, or the storage no longer holds the history: 410) catches
// up through its own storage watch as before.

// gapTimeout bounds how long the shared read of a gap may take.
const gapTimeout = time.Minute

// gapIdleTimeout is how long the shared read may receive nothing (no
// event, no progress notification) before it is given up: a storage that
// does not answer progress requests would otherwise keep its watchers
// waiting until gapTimeout.
const gapIdleTimeout = 5 * time.Second

// gapRetention is how long a gap stays offered to watchers after its read
// ended; then it is dropped (watchers already replaying it keep it), so
// that the replaced state is not held until the next relist.
const gapRetention = 10 * time.Second

// gapHistory is the history between a replaced cache's revision (from)
// and the list that replaced it (until), applied to a fork of the replaced
// state.
type gapHistory struct {
	cache       *watchcache.Cache
	from, until uint64
	// failed: the shared read ended before until; watchers fall back to
	// their own storage watches.
	failed atomic.Bool
}

// covers reports whether the gap can replay the events after pos.
func (g *gapHistory) covers(pos uint64) bool {
	return !g.failed.Load() && g.from <= pos && pos < g.until
}

// forkGap prepares the shared catch-up of a replace from the cache's
// current state to until, when live watchers will need it (inside the
// hub's commit, before the cache is replaced); nil when none will.
func (c *Cacher) forkGap(tx hubTx, until uint64) *gapHistory {
	from, _ := c.cache.RV()
	if !tx.live() || from >= until {
		return nil
	}
	f, ok := c.cache.Fork()
	if !ok {
		return nil
	}
	return &gapHistory{cache: f, from: from, until: until}
}

// fail marks the gap as unable to serve (nil-safe).
func (g *gapHistory) fail() {
	if g != nil {
		g.failed.Store(true)
	}
}

// startGap starts reading the storage's history into g, which replace
// published (c.gap) inside the hub's commit; called after it, as it takes
// runMu (the lock order is runMu, then the hub's lock).
func (c *Cacher) startGap(g *gapHistory) {
	if g == nil {
		return
	}
	c.runMu.Lock()
	defer c.runMu.Unlock()
	if g.failed.Load() || c.stopped || c.runCtx.Err() != nil {
		g.fail()
		c.gap.CompareAndSwap(g, nil)
		return
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		if err := c.feedGap(c.runCtx, g); err != nil {
			g.fail()
			if c.runCtx.Err() == nil {
				c.log.Warn("cacher: the shared catch-up read failed; watchers catch up one by one",
					"prefix", c.prefix, "from", g.from, "until", g.until, "err", err)
			}
		}
		t := c.clk.sched.NewTimer(gapRetention)
		defer t.Stop()
		select {
		case <-c.runCtx.Done():
		case <-t.C():
		}
		c.gap.CompareAndSwap(g, nil)
	}()
}

// feedGap applies the storage's events after g.from, up to g.until, to
// g's cache, through one storage watch.
func (c *Cacher) feedGap(ctx context.Context, g *gapHistory) error {
	ctx, cancel := context.WithTimeout(ctx, gapTimeout)
	defer cancel()
	opts := storage.ListOptions{ResourceVersion: strconv.FormatUint(g.from, 10), Recursive: true, ProgressNotify: true,
		RevisionEndBookmarks: true, Predicate: storage.SelectionPredicate{AllowWatchBookmarks: true}}
	sw, err := c.store.Watch(ctx, c.prefix, opts)
	if err != nil {
		return err
	}
	defer sw.Stop()
	poke := c.clk.sched.NewTicker(50 * time.Millisecond)
	defer poke.Stop()
	idle := c.clk.sched.NewTimer(gapIdleTimeout)
	defer idle.Stop()
	c.wantProgress()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-poke.C():
			c.wantProgress()
		case <-idle.C():
			return fmt.Errorf("no event or progress notification for %v", gapIdleTimeout)
		case ev, ok := <-sw.ResultChan():
			if !ok {
				return errors.New("storage watch closed")
			}
			idle.Reset(gapIdleTimeout)
			done, err := c.applyGapEvent(g, ev)
			if done || err != nil {
				return err
			}
		}
	}
}

// applyGapEvent applies one event of the shared read to g; done once g
// holds everything up to g.until.
func (c *Cacher) applyGapEvent(g *gapHistory, ev watch.Event) (done bool, err error) {
	switch ev.Type {
	case watch.Error:
		return true, statusError(ev.Object)
	case watch.Bookmark:
		b := c.objectRV(ev.Object)
		g.cache.UpdateRV(min(b, g.until))
		return b >= g.until, nil
	}
	r := c.objectRV(ev.Object)
	if r > g.until {
		g.cache.UpdateRV(g.until)
		return true, nil
	}
	if _, err := g.cache.Apply(ev.Type, ev.Object, r); err != nil {
		return true, err
	}
	return false, nil
}
