package cacher

import (
	"context"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/watchcache"
)

// hub is the cacher's live dispatch. It owns the dispatch lock (mu), the
// registry of the watchers in live dispatch (with its key, index and shard
// indexes and bookmark groups), the set of open watches, and the fields of
// each watcher that dispatch writes (seq, slot, direct, handoff, held, lagFrom, parked,
// parkTimer): offering events, lagging a watcher out of live dispatch,
// parking and waking it, bookmarks. It is the only code that takes mu.
//
// Two kinds of callers use it. The feed (the only writer of the cache)
// changes the cache and dispatches the change atomically inside commit,
// through a hubTx. A watcher calls the handful of methods that move it in
// and out of live dispatch (open, join, park, wakeAsync,
// queueBookmark, leave). Lock order: mu, then the cache's internal lock.
type hub struct {
	mu      sync.Mutex
	reg     *registry
	open    watcherSet // every watch not yet finished, live or not
	metrics Metrics
	// batching is set by the feed while more storage events wait behind
	// the one it applies: its commits then hold their deliveries (see
	// registry.hold) and hand them over together, so that a client is
	// woken once for several events.
	batching atomic.Bool
}

// maxHeldEvents bounds how many events a batch of commits holds before it
// delivers them: well under a watcher's result buffer, so that a batch
// does not fill it.
const maxHeldEvents = 8

func newHub(cfg Config) *hub {
	return &hub{reg: newRegistry(cfg), open: watcherSet{}, metrics: cfg.Metrics}
}

// hubTx is the feed's view of the hub inside commit (mu held): valid only
// during the commit's function.
type hubTx struct{ h *hub }

// commit runs fn with the dispatch lock held: the feed applies a change
// to the cache and dispatches it through tx, atomically with respect to
// watchers joining, parking and leaving.
//
// While the feed is batching, commit holds the deliveries of its dispatch
// (up to maxHeldEvents events); they are handed over, in order, before
// anything else touches a watcher under mu (lock) and when the batch ends.
func (h *hub) commit(fn func(tx hubTx) error) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	hold := h.batching.Load()
	if !hold {
		h.reg.flush()
	}
	h.reg.hold = hold
	err := fn(hubTx{h})
	h.reg.hold = false
	if !hold || h.reg.heldEvents >= maxHeldEvents {
		h.reg.flush()
	}
	return err
}

// lock takes mu and hands over the deliveries held by the feed's batch:
// every other use of a watcher's dispatch state comes after them.
func (h *hub) lock() {
	h.mu.Lock()
	h.reg.flush()
}

// batch tells the hub whether more storage events wait behind the one the
// feed applies next (see hub.batching); false ends a batch, handing over
// what it held.
func (h *hub) batch(more bool) {
	h.batching.Store(more)
	if !more && h.reg.held.Load() {
		h.mu.Lock()
		h.reg.flush()
		h.mu.Unlock()
	}
}

// dispatch queues ev to every live watcher it concerns and returns how many
// got it (see registry.dispatch).
func (tx hubTx) dispatch(ev *watchcache.Event) int { return tx.h.reg.dispatch(ev) }

// progressed queues a progress bookmark at rv (see registry.progressed).
func (tx hubTx) progressed(rv uint64) { tx.h.reg.flush(); tx.h.reg.progressed(rv) }

// bookmark queues the periodic bookmark at rv to one step of the bookmark
// round (see registry.bookmark).
func (tx hubTx) bookmark(step int, rv uint64) { tx.h.reg.flush(); tx.h.reg.bookmark(step, rv) }

// lagAll takes every live watcher out of live dispatch at from.
func (tx hubTx) lagAll(from uint64) { tx.h.reg.flush(); tx.h.reg.lagAll(from) }

// live reports whether any watcher is in live dispatch.
func (tx hubTx) live() bool { return len(tx.h.reg.all) > 0 }

// abortOpen ends every open watch, live or not, for which cause returns
// an error, with that error as its context's cause.
func (tx hubTx) abortOpen(cause func(w *watcher) error) {
	tx.h.reg.flush()
	for w := range tx.h.open {
		if err := cause(w); err != nil {
			w.abort(err)
		}
	}
}

// askIdleToPark asks the goroutine of every watcher in live dispatch that
// delivered nothing since the last call to park if it can (see watcher_park.go).
func (h *hub) askIdleToPark() {
	h.lock()
	defer h.mu.Unlock()
	for w := range h.reg.all {
		if w.parked || w.busy.Swap(false) {
			continue
		}
		w.parkAsk.Store(true)
		w.input.signal()
	}
}

// opened records a started watch (see startWatcher).
func (h *hub) opened(w *watcher) {
	h.lock()
	h.open[w] = struct{}{}
	h.mu.Unlock()
}

// leave takes w out of live dispatch and of the open watches, for good.
func (h *hub) leave(w *watcher) {
	h.lock()
	h.reg.remove(w)
	delete(h.open, w)
	h.mu.Unlock()
}

// join registers w for live dispatch if caughtUp, called with the lock
// held, reports that w has handled every event the cache holds: none can
// slip in between.
func (h *hub) join(w *watcher, caughtUp func() bool) bool {
	h.lock()
	defer h.mu.Unlock()
	if !caughtUp() {
		return false
	}
	h.reg.add(w)
	return true
}

// park parks w if it is idle in live dispatch: registered, nothing queued,
// not lagged, ctx not ended; it then enters direct mode, and its deadline
// bookmark, if any, wakes it (true: the calling goroutine must exit
// without touching w again).
func (h *hub) park(ctx context.Context, w *watcher) bool {
	h.lock()
	defer h.mu.Unlock()
	w.parkAsk.Store(false)
	// A context that ended before this point may have found the watcher
	// unparked already (its wake-up takes mu): stay.
	if !h.reg.has(w) || ctx.Err() != nil || len(w.lagged) != 0 || !w.input.empty() {
		return false
	}
	w.setDirect(true)
	w.parked = true
	if !w.bookmarkAt.IsZero() {
		// The callback wakes w from a goroutine of its own: a fake clock
		// runs callbacks holding its lock, which wake (stopping the timer)
		// and park (starting one) take while holding mu.
		wall := w.env.clk.wall
		w.parkTimer = wall.AfterFunc(w.bookmarkAt.Sub(wall.Now()), func() { go h.wakeAsync(w) })
	}
	return true
}

// wakeAsync wakes w if parked, from a timer or context callback.
func (h *hub) wakeAsync(w *watcher) {
	h.lock()
	w.wake()
	h.mu.Unlock()
}

// queueBookmark queues a bookmark at the cache's RV (rv, read with the
// lock held) to w while it is in live dispatch: every event up to that RV
// was queued before it, so the bookmark's promise holds. A full queue
// skips it (the watcher lags).
func (h *hub) queueBookmark(w *watcher, rv func() uint64) {
	h.lock()
	defer h.mu.Unlock()
	if !h.reg.has(w) {
		return
	}
	w.offer(&watchcache.Event{Type: watch.Bookmark, RV: rv()})
}
