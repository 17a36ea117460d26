// Package hub is the cacher's live dispatch: the registry of the watchers
// in live dispatch (indexed by key, prefix, label and field values and
// shard ranges), the log every change and bookmark is published to once
// and each live watcher reads from its own cursor (log.go), delivering
// to the watchers an entry concerns or waking them, and bookmarks.
//
// The Hub is the only holder of its lock (mu) and the only writer of the
// dispatch state of every watch (its Entry). Two kinds of callers use it.
// The cacher's feed, the only writer of the cache, changes the cache and
// dispatches the change atomically inside Commit, through a Tx. A watcher
// calls the handful of methods that move it in and out of live dispatch
// (Opened, Join, Wake, QueueBookmark, Lag, Leave). A watcher has a
// goroutine only while it has work the hub cannot do without blocking
// (handoff.go). Lock order: the hub's lock, then the cache's internal lock.
package hub

import (
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/utils/clock"

	"github.com/listwatch/listwatch/watchcache"
)

// Metrics is what the hub measures.
type Metrics interface {
	// WatcherLagged counts a watcher taken out of live dispatch because it
	// fell too far behind the log.
	WatcherLagged()
}

// Config configures a Hub.
type Config struct {
	// IndexLabels and IndexFields name labels and fields whose exact values
	// index watchers for dispatch (metadata.name and metadata.namespace
	// always are).
	IndexLabels, IndexFields []string
	// Wall times the watchers' deadline bookmarks and the coalesced
	// wake-ups.
	Wall clock.WithTickerAndDelayedExecution
	// CacheRV is the cache's RV and readiness, read with the hub's lock
	// held: the RV of the bookmarks the hub publishes.
	CacheRV func() (uint64, bool)
	Metrics Metrics
	// LogSize is how many entries the hub's log holds, at least
	// MinLogSize: a watcher whose oldest entry not taken is overwritten
	// leaves live dispatch.
	LogSize int
	// Coalesce is how long after a round of wake-ups (see Hub.Commit) the
	// commits of a burst defer waking the watchers they concern, so that a
	// client is woken once for the changes of that interval instead of once
	// per change; a commit after a quiet interval at least this long wakes
	// them at once (0: every commit does).
	Coalesce time.Duration
}

// Hub is the cacher's live dispatch; see the package doc.
type Hub struct {
	// mu guards reg, open and the dispatch state of every Entry; taken
	// only by the Hub's own methods.
	mu      sync.Mutex
	reg     *registry
	open    map[*Entry]struct{} // every watch not yet finished, live or not
	wall    clock.WithTickerAndDelayedExecution
	cacheRV func() (uint64, bool)
	// batching is set by the feed's goroutine while more storage events
	// wait behind the one it applies: its commits then defer waking the
	// watchers (see registry.hold) to the end of the batch, so that a
	// client is woken once for several events. Read by Commit.
	batching atomic.Bool
	// coalesce is Config.Coalesce; lastWake is when the last round of
	// wake-ups ran, and wakeArmed reports that a timer runs the next one
	// (mu).
	coalesce  time.Duration
	lastWake  time.Time
	wakeArmed bool
}

// MaxHeldEvents bounds how many events a batch of commits publishes before
// it wakes the watchers they concern: well under a watcher's result
// buffer, so that a batch does not fill it.
const MaxHeldEvents = 8

// New returns an empty hub.
func New(cfg Config) *Hub {
	return &Hub{reg: newRegistry(cfg), open: map[*Entry]struct{}{}, wall: cfg.Wall, cacheRV: cfg.CacheRV, coalesce: cfg.Coalesce}
}

// Tx is the feed's view of the hub inside Commit (the lock held): valid
// only during the commit's function.
type Tx struct{ h *Hub }

// Commit runs fn with the dispatch lock held: the feed applies a change
// to the cache and dispatches it through tx, atomically with respect to
// watchers joining, lagging and leaving.
//
// While the feed is batching, and within Config.Coalesce of the last round
// of wake-ups, Commit defers waking the watchers its dispatch concerns
// (for up to MaxHeldEvents events) to the end of the batch or of the
// interval; what they read and in which order is the log's, whenever they
// wake.
func (h *Hub) Commit(fn func(tx Tx) error) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	batching := h.batching.Load()
	var now time.Time
	early := false
	if h.coalesce > 0 {
		now = h.wall.Now()
		early = now.Sub(h.lastWake) < h.coalesce
	}
	h.reg.hold = batching || early
	err := fn(Tx{h})
	h.reg.hold = false
	switch {
	case h.reg.heldEvents >= MaxHeldEvents || (!batching && !early):
		h.wakeNow(now)
	case !batching:
		h.wakeLater(now)
	}
	return err
}

// wakeNow runs the deferred wake-ups (mu held); now is the time when
// coalescing, else zero.
func (h *Hub) wakeNow(now time.Time) {
	h.lastWake = now
	h.reg.flush()
}

// wakeLater runs the deferred wake-ups at the end of the coalescing
// interval (mu held), unless a commit does first.
func (h *Hub) wakeLater(now time.Time) {
	if h.wakeArmed || !h.reg.held.Load() {
		return
	}
	h.wakeArmed = true
	// The callback wakes from a goroutine of its own: a fake clock runs
	// callbacks holding its lock, which wakeDue's time read takes.
	h.wall.AfterFunc(h.lastWake.Add(h.coalesce).Sub(now), func() { go h.wakeDue() })
}

// wakeDue runs the deferred wake-ups at the end of a coalescing interval.
func (h *Hub) wakeDue() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.wakeArmed = false
	if h.reg.held.Load() {
		h.wakeNow(h.wall.Now())
	}
}

// Batch tells the hub whether more storage events wait behind the one the
// feed applies next (see Hub.batching); false ends a batch, waking the
// watchers it deferred.
func (h *Hub) Batch(more bool) {
	h.batching.Store(more)
	if !more && h.reg.held.Load() {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.coalesce == 0 {
			h.reg.flush()
			return
		}
		if now := h.wall.Now(); now.Sub(h.lastWake) >= h.coalesce {
			h.wakeNow(now)
		} else {
			h.wakeLater(now)
		}
	}
}

// Dispatch publishes ev to the live watchers it concerns and returns how
// many it told (see registry.dispatch).
func (tx Tx) Dispatch(ev *watchcache.Event) int { return tx.h.reg.dispatch(ev) }

// Progressed publishes a progress bookmark at rv (see registry.progressed).
func (tx Tx) Progressed(rv uint64) { tx.h.reg.progressed(rv) }

// bookmark publishes the periodic bookmark at rv for one step of the
// bookmark round (see registry.bookmark).
func (tx Tx) bookmark(step int, rv uint64) { tx.h.reg.bookmark(step, rv) }

// LagAll takes every live watcher out of live dispatch at from.
func (tx Tx) LagAll(from uint64) { tx.h.reg.lagAll(from) }

// AbortOpen ends every open watch, live or not, for which cause returns
// an error, with that error as its context's cause.
func (tx Tx) AbortOpen(cause func(s *Spec) error) {
	for e := range tx.h.open {
		if err := cause(&e.Spec); err != nil {
			e.member.Abort(err)
		}
	}
}

// Opened records a started watch.
func (h *Hub) Opened(e *Entry) {
	h.mu.Lock()
	h.open[e] = struct{}{}
	h.mu.Unlock()
}

// Leave takes e out of live dispatch and of the open watches, for good.
func (h *Hub) Leave(e *Entry) {
	h.mu.Lock()
	h.reg.remove(e)
	delete(h.open, e)
	h.mu.Unlock()
}

// Join registers e for live dispatch if caughtUp, called with the lock
// held, reports that the watcher has handled every event the cache holds:
// none can slip in between. Its goroutine goes on delivering until it
// hands delivery to the hub (Entry.Release); the hub publishes its deadline
// bookmark, if still due, while it is in live dispatch.
func (h *Hub) Join(e *Entry, caughtUp func() bool) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !caughtUp() {
		return false
	}
	h.reg.add(e)
	h.armDeadline(e)
	return true
}

// QueueBookmark publishes e's deadline bookmark at the cache's RV while e
// is in live dispatch, unless it was sent: every event up to that RV is in
// the log before it, so the bookmark's promise holds.
func (h *Hub) QueueBookmark(e *Entry) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.reg.has(e) {
		return // its goroutine sends it, or the hub when it joins again
	}
	rv, ready := h.cacheRV()
	if !ready || !e.ClaimDeadlineBookmark() {
		return
	}
	h.reg.publishBookmark(rv, toOne, 0, e, watcherSet{e: {}})
}

// Lag takes e out of live dispatch when it fell behind the log (Take
// reported entries lost): it has handled every event up to pos and
// catches up from there.
func (h *Hub) Lag(e *Entry, pos uint64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.reg.has(e) {
		return // dispatch took it out already
	}
	h.reg.remove(e)
	e.lagFrom = pos
	h.reg.metrics.WatcherLagged()
}

// OldestLagging returns the oldest position, at or after floor, at which an
// open watcher left live dispatch and has not joined it again (see
// registry.lag); false when there is none. Such a watcher has handled
// every event up to it and catches up from there or later.
func (h *Hub) OldestLagging(floor uint64) (uint64, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	var oldest uint64
	found := false
	for e := range h.open {
		if e.lagFrom < floor || h.reg.has(e) || (found && e.lagFrom >= oldest) {
			continue
		}
		oldest, found = e.lagFrom, true
	}
	return oldest, found
}

// State reports whether e is in live dispatch, and whether the hub
// delivers for it (it has no goroutine, see handoff.go).
func (h *Hub) State(e *Entry) (live, direct bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.reg.has(e), e.Direct()
}

// Lock takes the hub's lock and returns its release, for tests that hold
// it as a long dispatch round would.
func (h *Hub) Lock() (unlock func()) {
	h.mu.Lock()
	return h.mu.Unlock
}

// Live is how many watchers are in live dispatch.
func (h *Hub) Live() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.reg.all)
}

// Visited is how many watchers dispatch has visited in total: its cost,
// for tests and benchmarks.
func (h *Hub) Visited() uint64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.reg.visited
}

// Add registers e, a watch with no goroutine, for live dispatch,
// unconditionally, the hub delivering for it: for tests and benchmarks of
// dispatch.
func (h *Hub) Add(e *Entry) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.reg.add(e)
	e.handoff.Store(byHub)
}
