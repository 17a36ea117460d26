package cacher

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/cacher/internal/history"
	"github.com/listwatch/listwatch/cacher/internal/hub"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/watchcache"
)

// Shared reads of the storage's history. A watcher whose position is in no
// cache's history replays a history.Shared: the state at a revision (from)
// and the storage's history after it up to a later one (until), read once
// through one storage stream, gathered into whole revisions (see
// history.Revision) and applied to a cache of its own; each watcher replays
// it filtered by its own predicate, as live events are, and then moves on
// to the cache. Two things start one, and nothing else:
//
//   - a relist (replace) leaves every watcher in live dispatch at the
//     revision the cache held before; its shared read starts from a fork of
//     the state it replaces (watchcache.Cache.Fork, O(1)) and reads up to
//     the list's revision;
//   - a watcher that lagged (a slow client) until its position left the
//     cache's history asks for one (Shared); it starts from the oldest
//     position among the watchers out of live dispatch (they lag at
//     different positions, and the first to ask is not always the furthest
//     behind), with the state listed at that exact revision in pages, and
//     reads up to the cache's revision. At most maxBehindReads are in flight.
//
// Both are offered to watchers until gapRetention after their read ended;
// a watcher they cannot serve (further behind, a failed read, too many
// reads) catches up through its own storage stream.

// gapTimeout bounds how long a shared read may take.
const gapTimeout = time.Minute

// gapIdleTimeout is how long a shared read may receive nothing (no event,
// no progress notification) before it is given up: a storage that does not
// answer progress requests would otherwise keep its watchers waiting until
// gapTimeout.
const gapIdleTimeout = 5 * time.Second

// gapRetention is how long a shared history stays offered to watchers
// after its read ended; then it is dropped (watchers already replaying it
// keep it), so that the state it holds is not kept until the next one.
const gapRetention = 10 * time.Second

// maxBehindReads bounds the shared reads for fallen-behind watchers in
// flight: beyond it, watchers catch up one by one.
const maxBehindReads = 2

// maxBehindEvents bounds the history a shared read for fallen-behind
// watchers keeps: a watcher whose part of it was dropped catches up
// through its own storage stream.
const maxBehindEvents = 100_000

// forkGap prepares the shared read of a replace from the cache's current
// state to until, when live watchers will need it (inside the hub's
// commit, before the cache is replaced); nil when none will. It is offered
// at once; startShared starts its read after the commit.
func (f *feed) forkGap(tx hub.Tx, until uint64) *history.Shared {
	from, _ := f.cache.RV()
	if !tx.Live() || from >= until {
		return nil
	}
	fork, ok := f.cache.Fork()
	if !ok {
		return nil
	}
	g := &history.Shared{Cache: fork, From: from, Until: until}
	f.shared.mu.Lock()
	f.shared.gap = g
	f.shared.mu.Unlock()
	return g
}

// Shared implements watcher.Source: the shared history that can replay
// the events after pos, other than skip (one that failed that watcher
// already): the last relist's, else one for watchers that fell out of the
// cache's history, started if need be; nil when none can.
func (f *feed) Shared(pos uint64, skip *history.Shared) *history.Shared {
	if g, ok := f.offered(pos, skip); ok {
		return g
	}
	// The hub's lock is not taken under shared.mu: read the positions first.
	until := f.CacheRV()
	floor := max(f.cache.Compacted(), 1)
	if until > maxBehindEvents {
		floor = max(floor, until-maxBehindEvents)
	}
	from := pos
	if oldest, ok := f.hub.OldestLagging(floor); ok {
		from = min(from, oldest)
	}
	f.shared.mu.Lock()
	if g, ok := f.offeredLocked(pos, skip); ok {
		f.shared.mu.Unlock()
		return g
	}
	until = f.CacheRV()
	if f.shared.reading >= maxBehindReads || !f.CacheHolds(until) || pos == 0 || pos >= until || pos < f.cache.Compacted() {
		f.shared.mu.Unlock()
		return nil
	}
	from = max(from, f.cache.Compacted())
	cfg := f.cfg.cacheConfig()
	cfg.MinCapacity = int(min(until-from+1, maxBehindEvents))
	cfg.MaxCapacity, cfg.MaxSnapshots, cfg.Window = maxBehindEvents, 1, gapTimeout+gapRetention
	cache, err := watchcache.New(cfg)
	if err != nil {
		f.shared.mu.Unlock()
		f.log.Warn("cacher: no shared catch-up for watchers that fell behind", "prefix", f.prefix, "err", err)
		return nil
	}
	g := &history.Shared{Cache: cache, From: from, Until: until}
	f.shared.behind = g
	f.shared.reading++
	f.shared.mu.Unlock()
	if !f.startShared(g, f.listAt, true) {
		return nil
	}
	return g
}

// offered returns an offered shared history that can serve pos (ok, g),
// or nil with ok when the fall-behind read failed recently (do not hammer
// the storage); !ok when a read must be started.
func (f *feed) offered(pos uint64, skip *history.Shared) (*history.Shared, bool) {
	f.shared.mu.Lock()
	defer f.shared.mu.Unlock()
	return f.offeredLocked(pos, skip)
}

// offeredLocked is offered with shared.mu held.
func (f *feed) offeredLocked(pos uint64, skip *history.Shared) (*history.Shared, bool) {
	if g := f.shared.gap; g != nil && g != skip && g.Covers(pos) {
		return g, true
	}
	g := f.shared.behind
	switch {
	case g == nil:
		return nil, false
	case g == skip:
		return nil, true // it could not serve this watcher: its own stream does
	case g.Failed():
		return nil, true
	case g.Covers(pos):
		return g, true
	}
	return nil, false
}

// startShared starts g's read: fill (when not nil) puts the state at
// g.From in g.Cache, then readHistory the history after it. When the read
// ends, a fall-behind read (behind) stops counting against maxBehindReads;
// after gapRetention g is no longer offered. False (g failed) when the
// cacher is stopping. Called without the hub's lock: it takes runMu.
func (f *feed) startShared(g *history.Shared, fill func(context.Context, *history.Shared) error, behind bool) bool {
	f.runMu.Lock()
	defer f.runMu.Unlock()
	if g.Failed() || f.stopped || f.runCtx == nil || f.runCtx.Err() != nil {
		g.Fail()
		f.readEnded(behind)
		f.unoffer(g)
		return false
	}
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		var err error
		if fill != nil {
			ctx, cancel := context.WithTimeout(f.runCtx, gapTimeout)
			err = fill(ctx, g)
			cancel()
		}
		if err == nil {
			err = f.readHistory(f.runCtx, g)
		}
		if err != nil {
			g.Fail()
			if f.runCtx.Err() == nil {
				f.log.Warn("cacher: a shared catch-up read failed; its watchers catch up one by one",
					"prefix", f.prefix, "from", g.From, "until", g.Until, "err", err)
			}
		}
		f.readEnded(behind)
		t := f.clk.sched.NewTimer(gapRetention)
		defer t.Stop()
		select {
		case <-f.runCtx.Done():
		case <-t.C():
		}
		f.unoffer(g)
	}()
	return true
}

// readEnded records that a read ended; a fall-behind read (behind) no
// longer counts against maxBehindReads.
func (f *feed) readEnded(behind bool) {
	if !behind {
		return
	}
	f.shared.mu.Lock()
	defer f.shared.mu.Unlock()
	f.shared.reading--
}

// unoffer stops offering g.
func (f *feed) unoffer(g *history.Shared) {
	f.shared.mu.Lock()
	defer f.shared.mu.Unlock()
	switch g {
	case f.shared.gap:
		f.shared.gap = nil
	case f.shared.behind:
		f.shared.behind = nil
	}
}

// listAt fills g's cache with the state at g.From, read in pages.
func (f *feed) listAt(ctx context.Context, g *history.Shared) error {
	var objs []runtime.Object
	start := f.prefix
	for {
		items, next, rv, err := f.listPage(ctx, start, g.From, int64(f.cfg.ListPageSize))
		if err != nil {
			return err
		}
		if rv != g.From {
			return errors.New("the list did not answer at the revision asked")
		}
		objs = append(objs, items...)
		if next == "" {
			return g.Cache.Replace(objs, g.From)
		}
		start = next
	}
}

// readHistory applies the storage's events after g.From, up to g.Until,
// to g's cache, through one storage stream, a whole revision at a time.
func (f *feed) readHistory(ctx context.Context, g *history.Shared) error {
	ctx, cancel := context.WithTimeout(ctx, gapTimeout)
	defer cancel()
	opts := storage.ListOptions{ResourceVersion: storage.RVAt(g.From), Recursive: true, ProgressNotify: true,
		RevisionEndBookmarks: true, Predicate: storage.SelectionPredicate{AllowWatchBookmarks: true}}
	sw, err := f.store.Watch(ctx, f.prefix, opts)
	if err != nil {
		return err
	}
	defer sw.Stop()
	poke := f.clk.sched.NewTicker(50 * time.Millisecond)
	defer poke.Stop()
	idle := f.clk.sched.NewTimer(gapIdleTimeout)
	defer idle.Stop()
	// A pause after a gathered event completes its revision, as for a
	// watcher's own stream: etcd delivers a revision's events together.
	paused := f.clk.wall.NewTimer(time.Hour)
	defer paused.Stop()
	f.WantProgress()
	var rev history.Revision
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-poke.C():
			f.WantProgress()
		case <-idle.C():
			return fmt.Errorf("no event or progress notification for %v", gapIdleTimeout)
		case <-paused.C():
			if rev.Empty() {
				continue
			}
			last := rev.RV
			if err := applyShared(g, &rev); err != nil || last >= g.Until {
				return err
			}
		case ev, ok := <-sw.ResultChan():
			if !ok {
				return errors.New("storage watch closed")
			}
			idle.Reset(gapIdleTimeout)
			done, err := f.readEvent(g, ev, &rev)
			if done || err != nil {
				return err
			}
			if !rev.Empty() {
				paused.Reset(history.Pause)
			}
		}
	}
}

// readEvent takes one event of g's stream into rev, applying rev to g's
// cache once complete; done once g holds everything up to g.Until.
func (f *feed) readEvent(g *history.Shared, ev watch.Event, rev *history.Revision) (done bool, err error) {
	switch ev.Type {
	case watch.Error:
		return true, statusError(ev.Object)
	case watch.Bookmark:
		b := f.objectRV(ev.Object)
		if rev.Ends(b, true) {
			if err := applyShared(g, rev); err != nil {
				return true, err
			}
		}
		g.Cache.UpdateRV(min(b, g.Until))
		return b >= g.Until, nil
	}
	r := f.objectRV(ev.Object)
	if rev.Ends(r, false) {
		if err := applyShared(g, rev); err != nil {
			return true, err
		}
	}
	if r > g.Until {
		g.Cache.UpdateRV(g.Until)
		return true, nil
	}
	rev.Add(ev, r, "")
	return false, nil
}

// applyShared applies the whole revision rev to g's cache.
func applyShared(g *history.Shared, rev *history.Revision) error {
	defer rev.Reset()
	for _, e := range rev.Events {
		if _, err := g.Cache.Apply(e.Type, e.Object, rev.RV); err != nil {
			return err
		}
	}
	g.Cache.UpdateRV(rev.RV)
	return nil
}
