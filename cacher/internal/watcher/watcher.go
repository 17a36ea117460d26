package watcher

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/cacher/internal/history"
	"github.com/listwatch/listwatch/cacher/internal/hub"
	"github.com/listwatch/listwatch/watchcache"
)

// Watcher is one watch served by the cacher: a delivery state machine
// (initial events, catch-up from history, live dispatch, parked) that
// reads history through its Env's Source and joins and leaves live
// dispatch through its Env's Hub; it knows nothing else of the cacher.
//
// Its goroutine (run, and follow after a wake-up) owns the delivery state
// and sends on result, which finish closes; except while the hub delivers
// directly (direct mode, see hub.Entry): then the hub's dispatch, under
// the hub's lock, calls DeliverDirect, which owns them and sends on
// result without blocking. The hub owns e's dispatch state. Only the
// cacher's Watch creates watchers; their clients call ResultChan and Stop.
type Watcher struct {
	env *Env
	e   *hub.Entry
	// Encoded: objects go out as *storage.EncodedObject (WatchEncoded).
	// Set before Start.
	Encoded bool
	// BookmarkAt is when to send the bookmark that precedes the watch's
	// deadline (zero: none; see storage.DeadlineBookmarkTime). Set before
	// Start; then owned by the goroutine.
	BookmarkAt time.Time
	// Plan is where the watch starts; set before Start.
	Plan Plan

	// result carries events to the client; closed by finish.
	result chan watch.Event
	// done is closed by finish after result.
	done chan struct{}
	// stopped is closed by Stop, before the context is cancelled.
	stopped  chan struct{}
	abort    context.CancelCauseFunc // ends the watch's context with a cause
	stopOnce sync.Once

	// Owned by the goroutine (or dispatch in direct mode, see above):
	pos      uint64 // every event with RV <= pos has been delivered or filtered out
	lastSent uint64 // RV of the last event or bookmark sent
	// revRV and revSeen are the keys handled at revision revRV (> pos),
	// whose events may still be arriving: a revision's events are applied
	// and dispatched one by one, so a watcher can join, lag or switch
	// sources in the middle of one; replays skip what it already handled.
	revRV   uint64
	revSeen []string
	// initialRead is the shared read the initial state came from, which the
	// first catch-up reads on from (see initialFromStorage).
	initialRead *history.Shared

	// ctx is the watch's context; release frees what the cacher set up
	// (called once, by finish).
	ctx     context.Context
	release func()
}

// Start opens the watch in the hub and starts its goroutine with ctx,
// which abort ends with a cause; finish calls release once the watch has
// ended.
func (w *Watcher) Start(ctx context.Context, abort context.CancelCauseFunc, release func()) {
	// Set before the hub knows the watch: from then on it may abort it
	// (Hub's AbortOpen) or deliver to it.
	w.ctx, w.abort, w.release = ctx, abort, release
	w.env.Hub.Opened(w.e)
	go w.run(ctx)
}

// Abort implements hub.Member: it ends the watch with cause.
func (w *Watcher) Abort(cause error) { w.abort(cause) }

// Resume implements hub.Member: a goroutine for the parked watcher, which
// resumes in live dispatch (the hub's lock held).
func (w *Watcher) Resume() { go w.follow(w.ctx, false) }

// ResultChan implements watch.Interface.
func (w *Watcher) ResultChan() <-chan watch.Event { return w.result }

// Stop implements watch.Interface: it ends the watch and waits until the
// result channel is closed. Safe to call more than once.
func (w *Watcher) Stop() {
	w.stopOnce.Do(func() {
		close(w.stopped)
		if w.abort != nil {
			w.abort(nil)
		}
	})
	<-w.done
}

// DeliverDirect implements hub.Member: deliver for the dispatcher in
// direct mode (the hub's lock held).
func (w *Watcher) DeliverDirect(ev *watchcache.Event, shared *hub.Wrappers) bool {
	if w.ctx != nil && w.ctx.Err() != nil {
		// Ended (by its client, or by the cacher at a revision it cannot
		// deliver): its goroutine finishes it; nothing after that point.
		return true
	}
	if ev.Type == watch.Bookmark {
		if !w.e.Bookmarks || ev.RV < w.lastSent || ev.RV < w.pos {
			return true
		}
		out, ok := w.bookmarkEvent(ev.RV, false)
		return !ok || w.trySend(out, ev.RV)
	}
	if w.handled(ev.RV, ev.Key()) {
		return true
	}
	out, ok := w.convertWith(ev, shared)
	if ok && (out.Type == watch.Error || !w.trySend(out, ev.RV)) {
		// An error (an object that cannot be decoded) ends the watch,
		// which the watcher's goroutine does (see deliver).
		return false
	}
	w.markHandled(ev.RV, ev.Key())
	return true
}

// trySend sends ev if result has room.
func (w *Watcher) trySend(ev watch.Event, rv uint64) bool {
	select {
	case w.result <- ev:
		w.lastSent = max(w.lastSent, rv)
		return true
	default:
		return false
	}
}

// run is the watcher's first goroutine: initial events, then follow.
func (w *Watcher) run(ctx context.Context) {
	w.pos = w.Plan.Pos
	if (w.Plan.Initial != nil && !w.sendInitial(ctx)) || (w.Plan.StorageInitial && !w.initialFromStorage(ctx)) {
		w.finish(ctx)
		return
	}
	w.follow(ctx, true)
}

// follow alternates catching up from history and following live dispatch
// (starting with live dispatch unless catchUpFirst) until the watch ends
// or the goroutine parks (see park.go).
func (w *Watcher) follow(ctx context.Context, catchUpFirst bool) {
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
func (w *Watcher) live(ctx context.Context) liveEnd {
	var batch []*watchcache.Event
	var beforeDeadline <-chan time.Time
	if !w.BookmarkAt.IsZero() {
		t := w.env.Wall.NewTimer(w.BookmarkAt.Sub(w.env.Wall.Now()))
		defer t.Stop()
		beforeDeadline = t.C()
	}
	for {
		select {
		case <-ctx.Done():
			return liveEnded
		case <-beforeDeadline:
			beforeDeadline = nil
			w.BookmarkAt = time.Time{}
			w.env.Hub.QueueBookmark(w.e, w.env.Source.CacheRV)
		case <-w.e.Ready():
			if !w.e.Reclaim() {
				// Dispatch delivers directly: a stale token, or parkLoop
				// asking the goroutine to park.
				if w.parkIfAsked(ctx) {
					return liveParked
				}
				continue
			}
			batch = w.e.Take(batch)
			if len(batch) == 0 {
				// A stale token (what it announced was taken already), or
				// parkLoop asking the goroutine to park.
				if w.parkIfAsked(ctx) {
					return liveParked
				}
				w.e.OfferDirect()
				continue
			}
			w.e.MarkBusy()
			for _, ev := range batch {
				if !w.deliver(ctx, ev) {
					return liveEnded
				}
			}
			w.e.OfferDirect()
		case <-w.e.Lagged():
			if !w.drain(ctx, batch) {
				return liveEnded
			}
			return liveLagged
		}
	}
}

// drain delivers what the dispatcher queued before it took the watcher out
// of live dispatch; every event up to lagFrom is then handled.
func (w *Watcher) drain(ctx context.Context, batch []*watchcache.Event) bool {
	for _, ev := range w.e.Take(batch) {
		if !w.deliver(ctx, ev) {
			return false
		}
	}
	w.e.DropToken()
	w.pos = max(w.pos, w.e.LagFrom())
	return true
}
