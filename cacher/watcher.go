package cacher

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"

	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/watchcache"
)

// watcher is one watch served by the cacher: a delivery state machine
// (initial events, catch-up from history, live dispatch, parked) that
// reads history through env.src and joins and leaves live dispatch through
// env.hub; it knows nothing else of the cacher. Its goroutine (run) owns
// the delivery state and sends on result, which it closes when it exits,
// except while direct is set: then the hub's dispatch (under hub.mu) owns
// them and sends on result itself, without blocking. Otherwise the hub
// writes only input, lagged, lagFrom, seq, slot, direct, handoff, held,
// parked and parkTimer. Only the cacher's Watch creates watchers; their clients call
// ResultChan and Stop.
type watcher struct {
	env       *watcherEnv
	key       string
	recursive bool
	prefix    string // key + "/" for recursive watches
	pred      storage.SelectionPredicate
	emptyPred bool
	bookmarks bool // the client allows bookmarks
	encoded   bool // objects go out as *storage.EncodedObject (WatchEncoded)
	// progressNotify: the client asked for storage progress notifications.
	progressNotify bool
	// bookmarkSlot is the step of the bookmark round at which the watcher
	// gets its periodic bookmark (see bookmarkLoop).
	bookmarkSlot int
	// bookmarkAt is when to send the bookmark that precedes the watch's
	// deadline (zero: none; see storage.DeadlineBookmarkTime).
	bookmarkAt time.Time

	// input is the queue of live events, filled without blocking by the
	// dispatcher while the watcher is registered; never closed.
	input *eventQueue
	// lagged is signalled after the dispatcher removed the watcher because
	// input was full (or the cache was replaced); lagFrom is then the RV up
	// to which every concerning event has been queued.
	lagged  chan struct{}
	lagFrom uint64
	seq     uint64 // dispatcher-owned dispatch round
	slot    slot   // dispatcher-owned index position
	// direct (guarded by hub.mu) lets the dispatcher deliver live events
	// straight to result, saving the goroutine hop per event while the
	// client keeps up. The dispatcher sets it when the goroutine offered
	// delivery back with nothing queued (handoff, see watcher_handoff.go)
	// and clears it when result is full (the event then goes to input,
	// which wakes the goroutine) and when the watcher leaves live
	// dispatch.
	direct bool
	// handoff is who delivers, as the goroutine and dispatch pass
	// delivery between them without the goroutine taking hub.mu (see
	// watcher_handoff.go).
	handoff atomic.Int32
	// held are the live events dispatch holds for the watcher while the
	// feed batches (see registry.hold); dispatcher-owned.
	held []*watchcache.Event

	// result carries events to the client; closed by finish.
	result chan watch.Event
	// done is closed by finish after result.
	done chan struct{}
	// stopped is closed by Stop, before the context is cancelled.
	stopped  chan struct{}
	abort    context.CancelCauseFunc // ends the watch's context with a cause
	stopOnce sync.Once

	// Owned by run:
	plan     watchPlan
	pos      uint64 // every event with RV <= pos has been delivered or filtered out
	lastSent uint64 // RV of the last event or bookmark sent
	// revRV and revSeen are the keys handled at revision revRV (> pos),
	// whose events may still be arriving: a revision's events are applied
	// and dispatched one by one, so a watcher can join, lag or switch
	// sources in the middle of one; replays skip what it already handled.
	revRV   uint64
	revSeen []string
	// noGap is a shared history (see feed_gap.go) that could not serve the
	// watcher: it does not try it again.
	noGap *gapHistory
	// sharedRead is the shared history chosen by shared, for the catch-up
	// that chose it.
	sharedRead *gapHistory

	// ctx is the watch's context; release frees what startWatcher set up
	// (called once, by finish).
	ctx     context.Context
	release func()
	// parked (guarded by hub.mu): the watcher has no goroutine; see
	// watcher_park.go. parkTimer wakes it for its deadline bookmark.
	parked    bool
	parkTimer clock.Timer
	// parkAsk is set by parkLoop (with a token on input.ready) to ask the
	// goroutine to park if it can; busy is set by the goroutine when it
	// delivers a batch, and cleared by parkLoop, which leaves busy watchers
	// be.
	parkAsk, busy atomic.Bool
}

// ResultChan implements watch.Interface.
func (w *watcher) ResultChan() <-chan watch.Event { return w.result }

// Stop implements watch.Interface: it ends the watch and waits until the
// result channel is closed. Safe to call more than once.
func (w *watcher) Stop() {
	w.stopOnce.Do(func() {
		close(w.stopped)
		if w.abort != nil {
			w.abort(nil)
		}
	})
	<-w.done
}

// interested reports whether ev is in w's key scope and matches its
// predicate before or after the change. Called by the dispatcher.
func (w *watcher) interested(ev *watchcache.Event) bool {
	if !w.inScope(ev.Key()) {
		return false
	}
	if w.emptyPred {
		return true
	}
	return (ev.Type != watch.Deleted && w.matches(ev.Cur)) || (ev.Prev != nil && w.matches(ev.Prev))
}

func (w *watcher) inScope(key string) bool {
	if w.recursive {
		return strings.HasPrefix(key, w.prefix)
	}
	return key == w.key
}

func (w *watcher) matches(el *watchcache.Element) bool {
	return w.emptyPred || el.Matches(&w.pred)
}

// offer hands ev to the watcher without blocking (hub.mu held):
// straight to result in direct mode, else to its input queue; false means
// the queue is full.
func (w *watcher) offer(ev *watchcache.Event) bool {
	if !w.direct {
		w.takeOffer()
	}
	if w.direct {
		if w.deliverNow(ev) {
			return true
		}
		w.setDirect(false)
	}
	if !w.input.push(ev) {
		return false
	}
	w.wake()
	return true
}

// deliverNow is deliver for the dispatcher in direct mode: true when ev is
// sent or concerns nothing; false, with nothing changed, when result is
// full or the event must end the watch.
func (w *watcher) deliverNow(ev *watchcache.Event) bool {
	if w.ctx != nil && w.ctx.Err() != nil {
		// Ended (by its client, or by the cacher at a revision it cannot
		// deliver): its goroutine finishes it; nothing after that point.
		return true
	}
	if ev.Type == watch.Bookmark {
		if !w.bookmarks || ev.RV < w.lastSent || ev.RV < w.pos {
			return true
		}
		out, ok := w.bookmarkEvent(ev.RV, false)
		return !ok || w.trySend(out, ev.RV)
	}
	if w.handled(ev.RV, ev.Key()) {
		return true
	}
	out, ok := w.convertWith(ev, &w.env.hub.reg.wrappers)
	if ok && (out.Type == watch.Error || !w.trySend(out, ev.RV)) {
		// An error (an object that cannot be decoded) ends the watch,
		// which the watcher's goroutine does (see deliver).
		return false
	}
	w.markHandled(ev.RV, ev.Key())
	return true
}

// trySend sends ev if result has room.
func (w *watcher) trySend(ev watch.Event, rv uint64) bool {
	select {
	case w.result <- ev:
		w.lastSent = max(w.lastSent, rv)
		return true
	default:
		return false
	}
}

// run is the watcher's first goroutine: initial events, then follow.
func (w *watcher) run(ctx context.Context) {
	w.pos = w.plan.pos
	if (w.plan.initial != nil && !w.sendInitial(ctx)) || (w.plan.storageFirst && !w.catchUpFromStorage(ctx)) {
		w.finish(ctx)
		return
	}
	w.follow(ctx, true)
}

// follow alternates catching up from history and following live dispatch
// (starting with live dispatch unless catchUpFirst) until the watch ends
// or the goroutine parks (see watcher_park.go).
func (w *watcher) follow(ctx context.Context, catchUpFirst bool) {
	for {
		if catchUpFirst && !w.catchUp(ctx) {
			w.finish(ctx)
			return
		}
		catchUpFirst = true
		switch w.live(ctx) {
		case liveEnded:
			w.finish(ctx)
			return
		case liveParked:
			return
		}
	}
}

// live follows live dispatch until the watcher lags, ends or parks.
func (w *watcher) live(ctx context.Context) liveEnd {
	var batch []*watchcache.Event
	var beforeDeadline <-chan time.Time
	if !w.bookmarkAt.IsZero() {
		t := w.env.clk.wall.NewTimer(w.bookmarkAt.Sub(w.env.clk.wall.Now()))
		defer t.Stop()
		beforeDeadline = t.C()
	}
	for {
		select {
		case <-ctx.Done():
			return liveEnded
		case <-beforeDeadline:
			beforeDeadline = nil
			w.bookmarkAt = time.Time{}
			w.env.hub.queueBookmark(w, w.env.src.cacheRV)
		case <-w.input.ready:
			if !w.reclaim() {
				// Dispatch delivers directly: a stale token, or parkLoop
				// asking the goroutine to park.
				if w.parkIfAsked(ctx) {
					return liveParked
				}
				continue
			}
			batch = w.input.takeAll(batch)
			if len(batch) == 0 {
				// A stale token (what it announced was taken already), or
				// parkLoop asking the goroutine to park.
				if w.parkIfAsked(ctx) {
					return liveParked
				}
				w.offerDirect()
				continue
			}
			w.busy.Store(true)
			for _, ev := range batch {
				if !w.deliver(ctx, ev) {
					return liveEnded
				}
			}
			w.offerDirect()
		case <-w.lagged:
			if !w.drain(ctx, batch) {
				return liveEnded
			}
			return liveLagged
		}
	}
}

// drain delivers what the dispatcher queued before it took the watcher out
// of live dispatch; every event up to lagFrom is then handled.
func (w *watcher) drain(ctx context.Context, batch []*watchcache.Event) bool {
	for _, ev := range w.input.takeAll(batch) {
		if !w.deliver(ctx, ev) {
			return false
		}
	}
	select { // the token of what was just taken, if still there
	case <-w.input.ready:
	default:
	}
	w.pos = max(w.pos, w.lagFrom)
	return true
}
