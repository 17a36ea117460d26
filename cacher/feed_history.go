package cacher

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/cacher/internal/history"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/watchcache"
)

// Shared reads of the storage's history (history.Shared). A watcher replays
// the cache's history (the ring) when it can; when the ring no longer
// holds its position (a relist left it behind, it fell behind as a slow
// client, its watch starts from an RV older than the ring or etcd
// compacted) or the cache cannot serve (not ready, not trusted), it
// replays a shared read instead: the state of a scope at a revision
// (From), listed in pages at that exact revision, and the storage's
// history after it, read through one storage stream. Watchers that need
// the same part of the history share one read (Read):
//
//   - a watcher that fell out of live dispatch (lagged, or left behind by a
//     relist) gets a read of the whole resource from the oldest position
//     at which a watcher left live dispatch (they lag at different
//     positions, and the first to ask is not always the furthest behind),
//     so that every watcher behind shares it;
//   - a new watch from an old RV gets a read of its own scope from its RV,
//     shared with the watches from the same RV and scope;
//   - an RV etcd compacted, and an initial state, get a read started at
//     exactly that revision for exactly that scope (Want.Exact), whose
//     failure is the storage's answer to the watch (410 for a compacted
//     RV). A watcher whose shared read failed asks for an exact one.
//
// A read is reference-counted: Read takes a reference, Release gives it
// back. Its storage stream ends when its last reader leaves, when the
// cache's history holds what it read last (the ring takes over: each
// reader moves to it once it holds the reader's position), after
// readTimeout, or with the storage's answer (an error event). Bounds: at
// most MaxCatchUpStreams reads with readers (a watcher that needs one more
// waits); each holds its scope's state and at most maxReadEvents events
// (a reader that falls out of them asks for a read from its position). A
// read without readers is dropped, except the newest one while a watcher
// out of live dispatch sits at a position it holds (the next one behind
// is coming to it): that idle read has no stream, and goes at the next
// new read or Release that finds no such watcher. So no reader holds a
// storage stream longer than readTimeout; a reader blocked on its client
// keeps the history of the read it replays (and its place among the
// MaxCatchUpStreams) until it moves on or its watch ends, as the storage
// watch of its own that this replaces kept its etcd watch and slot.

// readTimeout bounds how long a shared read's list and stream may take.
const readTimeout = time.Minute

// readIdleTimeout is how long a shared read may receive nothing (no event,
// no progress notification) before its stream is given up: a storage that
// does not answer progress requests would otherwise keep its readers
// waiting until readTimeout.
const readIdleTimeout = 5 * time.Second

// maxReadEvents bounds the history a shared read keeps.
const maxReadEvents = 100_000

// resource is the scope of the whole resource.
func (f *feed) resource() history.Scope { return history.Scope{Key: f.prefix, Recursive: true} }

// Read implements watcher.Source: a shared read that holds want.Pos for
// want.Scope, with a reference the caller gives back (Release), started if
// none does. It waits while MaxCatchUpStreams reads have readers; an
// error only when ctx ends first (or a read cannot be made).
func (f *feed) Read(ctx context.Context, want history.Want) (*history.Shared, error) {
	compacted := f.cache.Compacted()
	exact := want.Exact || want.Pos < compacted // etcd's answer for a compacted RV
	from, scope, planned := want.Pos, want.Scope, false
	for {
		f.shared.mu.Lock()
		g := f.sharedFor(want.Pos, want.Scope, exact)
		fresh := g == nil && planned && len(f.shared.reads) < f.cfg.MaxCatchUpStreams
		if fresh {
			var err error
			if g, err = f.newRead(from, scope); err != nil {
				f.shared.mu.Unlock()
				return nil, err
			}
			f.shared.reads = append(f.shared.reads, g)
		}
		if g != nil {
			g.Refs++
			f.shared.mu.Unlock()
			if fresh {
				f.startRead(g)
			}
			return g, nil
		}
		freed := f.shared.freed
		f.shared.mu.Unlock()
		if !planned {
			// The hub's lock is not taken under shared.mu: plan the new
			// read without it, then look again.
			planned = true
			f.sweepIdle()
			if want.Behind && !exact {
				from, scope = f.behindFrom(want.Pos, compacted), f.resource()
			}
			continue
		}
		select {
		case <-freed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// behindFrom is where a read for a watcher out of live dispatch at pos
// starts: the oldest position at which a watcher left live dispatch, not
// before etcd's compaction nor maxReadEvents before the cache's revision.
func (f *feed) behindFrom(pos, compacted uint64) uint64 {
	floor, cur := max(compacted, 1), f.CacheRV()
	if cur > maxReadEvents {
		floor = max(floor, cur-maxReadEvents)
	}
	if oldest, ok := f.hub.OldestLagging(floor); ok {
		pos = min(pos, oldest)
	}
	return max(pos, compacted)
}

// sharedFor is a read (one with readers, or the idle one, which then has
// readers again) that can serve pos for scope; started at exactly pos for
// exactly scope when exact. Called with shared.mu held.
func (f *feed) sharedFor(pos uint64, scope history.Scope, exact bool) *history.Shared {
	fits := func(g *history.Shared) bool {
		return g != nil && g.Holds(pos, scope) && (!exact || (g.From == pos && g.Scope == scope))
	}
	for _, g := range f.shared.reads {
		if fits(g) {
			return g
		}
	}
	if g := f.shared.idle; fits(g) && len(f.shared.reads) < f.cfg.MaxCatchUpStreams {
		f.shared.idle = nil
		f.shared.reads = append(f.shared.reads, g)
		return g
	}
	return nil
}

// newRead returns the read of scope from revision from, not started.
func (f *feed) newRead(from uint64, scope history.Scope) (*history.Shared, error) {
	cfg := f.cfg.cacheConfig()
	cfg.MinCapacity = int(min(max(f.CacheRV(), from)-from+1, maxReadEvents))
	cfg.MaxCapacity, cfg.MaxSnapshots, cfg.Window = maxReadEvents, 1, readTimeout
	cache, err := watchcache.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("cacher: a shared read of the storage's history: %w", err)
	}
	return history.NewShared(cache, from, scope), nil
}

// Release implements watcher.Source: the caller no longer replays g. The
// last reader to leave ends g's stream; g is then kept as the idle read
// when a watcher out of live dispatch may come to it.
func (f *feed) Release(g *history.Shared) {
	f.shared.mu.Lock()
	g.Refs--
	if g.Refs > 0 {
		f.shared.mu.Unlock()
		return
	}
	for i, r := range f.shared.reads {
		if r == g {
			f.shared.reads = append(f.shared.reads[:i], f.shared.reads[i+1:]...)
			break
		}
	}
	g.Stop()
	f.shared.idle = g
	close(f.shared.freed)
	f.shared.freed = make(chan struct{})
	f.shared.mu.Unlock()
	f.sweepIdle()
}

// sweepIdle drops the idle read when no watcher out of live dispatch sits
// at a position it holds.
func (f *feed) sweepIdle() {
	f.shared.mu.Lock()
	g := f.shared.idle
	f.shared.mu.Unlock()
	if g == nil {
		return
	}
	rv, _ := g.Cache.RV()
	if oldest, ok := f.hub.OldestLagging(g.From); ok && oldest < rv && g.Err() == nil {
		return
	}
	f.shared.mu.Lock()
	if f.shared.idle == g {
		f.shared.idle = nil
	}
	f.shared.mu.Unlock()
}

// startRead starts g's goroutine: the state at g.From, then the history
// after it, until g.Stop, the ring takes over, readTimeout or an error.
// It takes runMu: called without the hub's lock.
func (f *feed) startRead(g *history.Shared) {
	f.runMu.Lock()
	defer f.runMu.Unlock()
	if f.stopped || f.runCtx == nil || f.runCtx.Err() != nil {
		g.End(errStopping)
		return
	}
	ctx, cancel := context.WithTimeout(f.runCtx, readTimeout)
	f.shared.mu.Lock()
	g.Stop = cancel
	if g.Refs == 0 { // released before it started
		cancel()
	}
	f.shared.mu.Unlock()
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		defer cancel()
		err := f.listAt(ctx, g)
		if err == nil {
			err = f.readHistory(ctx, g)
		}
		var broken *brokenRead
		if errors.As(err, &broken) || (err != nil && ctx.Err() != nil) {
			// Not the storage's answer to its readers: they ask again.
			if ctx.Err() != context.Canceled { // not Release, not Run ending
				f.log.Warn("cacher: a shared read of the storage's history ended early; its readers read again",
					"prefix", f.prefix, "scope", g.Scope.Key, "from", g.From, "err", err)
			}
			err = nil
		}
		g.End(err)
	}()
}

// errStopping ends the reads asked for while the cacher stops.
var errStopping = &storage.Error{Code: storage.CodeNotReady, RetryAfterSeconds: 1, Msg: "the cacher is stopping"}

// brokenRead is a shared read's stream that ended without the storage's
// answer (closed, silent for readIdleTimeout).
type brokenRead struct{ error }

// listAt fills g's cache with the state of g.Scope at g.From, read in pages.
// Objects the storage cannot decode are left out, as the feed's own list
// leaves them out (listAround), and g.Corrupt keeps the storage's error
// naming them: a catch-up needs no state of theirs (the storage's watch
// reports their unsafe deletion itself), an initial state does.
func (f *feed) listAt(ctx context.Context, g *history.Shared) error {
	l := &listing{rv: g.From}
	var corruptErr *storage.Error
	var named []string // the corrupt keys the storage named
	start := g.Scope.Key
	for {
		items, next, rv, err := f.listPage(ctx, g.Scope, start, g.From, int64(f.cfg.ListPageSize))
		if keys, corrupt := corruptKeysOf(err); len(keys) > 0 {
			if corruptErr == nil {
				corruptErr = corrupt
			}
			named = append(named, keys...)
			items, next, err = f.listAround(ctx, g.Scope, start, l, keys)
			rv = g.From
		}
		if err != nil {
			return err
		}
		if rv != g.From {
			return &brokenRead{errors.New("the list did not answer at the revision asked")}
		}
		l.items = append(l.items, items...)
		if next == "" {
			if corruptErr != nil {
				if len(l.corrupt) > 0 {
					named = l.corrupt
				}
				g.Corrupt = &storage.Error{Code: storage.CodeCorruptObj, Key: named[0], CorruptKeys: named,
					Msg: corruptErr.Msg, Err: corruptErr.Err}
			}
			return g.Cache.Replace(l.items, g.From)
		}
		start = next
	}
}

// readHistory applies the storage's events of g.Scope after g.From to g's
// cache, through one storage stream, a whole revision at a time, until
// the cache's history holds what it read (nil), ctx ends, or the storage
// fails it.
func (f *feed) readHistory(ctx context.Context, g *history.Shared) error {
	opts := storage.ListOptions{ResourceVersion: storage.RVAt(g.From), Recursive: g.Scope.Recursive, ProgressNotify: true,
		RevisionEndBookmarks: true, Predicate: storage.SelectionPredicate{AllowWatchBookmarks: true}}
	sw, err := f.store.Watch(ctx, g.Scope.Key, opts)
	if err != nil {
		return err
	}
	defer sw.Stop()
	poke := f.clk.sched.NewTicker(50 * time.Millisecond)
	defer poke.Stop()
	idle := f.clk.sched.NewTimer(readIdleTimeout)
	defer idle.Stop()
	// A pause after a gathered event completes its revision, as for the
	// feed's own watch: etcd delivers a revision's events together.
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
			return &brokenRead{fmt.Errorf("no event or progress notification for %v", readIdleTimeout)}
		case <-paused.C():
			if rev.Empty() {
				continue
			}
			last := rev.RV
			if err := applyShared(g, &rev); err != nil || f.CacheHolds(last) {
				return err
			}
		case ev, ok := <-sw.ResultChan():
			if !ok {
				return &brokenRead{errors.New("storage watch closed")}
			}
			idle.Reset(readIdleTimeout)
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
// cache once complete; done once the cache's history holds what g read.
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
		g.Cache.UpdateRV(b)
		return f.CacheHolds(b), nil
	}
	r := f.objectRV(ev.Object)
	if rev.Ends(r, false) {
		last := rev.RV
		if err := applyShared(g, rev); err != nil || f.CacheHolds(last) {
			return true, err
		}
	}
	rev.Add(ev, r, "")
	return false, nil
}

// applyShared applies the whole revision rev to g's cache.
func applyShared(g *history.Shared, rev *history.Revision) error {
	defer rev.Reset()
	defer g.Applying()()
	for _, e := range rev.Events {
		if _, err := g.Cache.Apply(e.Type, e.Object, rev.RV); err != nil {
			return err
		}
	}
	g.Cache.UpdateRV(rev.RV)
	return nil
}
