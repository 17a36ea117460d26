package watcher

import (
	"context"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/cacher/internal/history"
	"github.com/listwatch/listwatch/cacher/internal/hub"
)

// Watcher is one watch served by the cacher: a delivery state machine
// (initial events, catch-up from history, live dispatch, parked) that
// reads history through its Env's Source and joins and leaves live
// dispatch through its Env's Hub; it knows nothing else of the cacher.
//
// Its goroutine (run, and follow after a wake-up) owns the delivery state
// (and its cursor into the hub's log) and sends on result, which finish
// closes; except while the hub delivers (see the hub's handoff.go: while
// the client keeps up, and always while parked): then the hub, under its
// lock, calls DeliverDirect or DrainDirect, which own them and send on
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

	// Owned by the goroutine (or the hub while it delivers, see above):
	pos      uint64 // every event with RV <= pos has been delivered or filtered out
	lastSent uint64 // RV of the last event or bookmark sent
	// revRV and revSeen are the keys handled at revision revRV (> pos),
	// whose events may still be arriving: a revision's events are applied
	// and dispatched one by one, so a watcher can join, lag or switch
	// sources in the middle of one; replays skip what it already handled.
	revRV   uint64
	revSeen []string
	// directBatch is DrainDirect's buffer of log entries.
	directBatch []*hub.Published
	// noShared is a shared history that could not serve the watcher: it does
	// not try it again.
	noShared *history.Shared
	// sharedRead is the shared history chosen by shared, for the catch-up
	// that chose it.
	sharedRead *history.Shared

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

// DeliverDirect implements hub.Member: deliver p for the hub without
// blocking (the hub's lock held).
func (w *Watcher) DeliverDirect(p *hub.Published) bool {
	return w.deliverEvent(w.ctx, p.Event, p, false)
}

// DrainDirect implements hub.Member: deliver, for the hub, what the
// watcher has to take from the log without blocking (the hub's lock
// held); what does not fit is given back for its goroutine.
func (w *Watcher) DrainDirect() bool {
	batch, lost := w.e.Take(w.directBatch)
	w.directBatch = batch
	defer clear(batch)
	for i, p := range batch {
		if !w.deliverEvent(w.ctx, p.Event, p, false) {
			w.e.Untake(batch[i:])
			return false
		}
	}
	if lost {
		w.e.Untake(nil) // its goroutine finds the loss again and lags
		return false
	}
	return true
}

// run is the watcher's first goroutine: initial events, then follow.
func (w *Watcher) run(ctx context.Context) {
	w.pos = w.Plan.Pos
	if (w.Plan.Initial != nil && !w.sendInitial(ctx)) || (w.Plan.StorageFirst && !w.catchUpFromStorage(ctx)) {
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

// live follows live dispatch until the watcher lags, ends or parks: woken
// by the hub when its client fell behind, it takes everything the log
// holds for it in one go, then offers delivery back to the hub.
func (w *Watcher) live(ctx context.Context) liveEnd {
	var batch []*hub.Published
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
				// The hub delivers: a stale token, or the park loop asking
				// the goroutine to park.
				if w.parkIfAsked(ctx) {
					return liveParked
				}
				continue
			}
			var lost bool
			batch, lost = w.e.Take(batch)
			if len(batch) == 0 && !lost {
				// A stale token (what it announced was taken already), or
				// the park loop asking the goroutine to park.
				if w.parkIfAsked(ctx) {
					return liveParked
				}
				w.e.OfferDirect()
				continue
			}
			w.e.MarkBusy()
			if !w.deliverAll(ctx, batch) {
				return liveEnded
			}
			if lost {
				// Fell behind the log: the cache's history has the rest.
				w.env.Hub.Lag(w.e, w.pos)
				return liveLagged
			}
			w.e.OfferDirect()
		case <-w.e.Lagged():
			return w.drain(ctx, batch)
		}
	}
}

// deliverAll delivers a batch taken from the log.
func (w *Watcher) deliverAll(ctx context.Context, batch []*hub.Published) bool {
	defer clear(batch)
	for _, p := range batch {
		if !w.deliverEvent(ctx, p.Event, p, true) {
			return false
		}
	}
	return true
}

// drain delivers what the log held for the watcher when dispatch took it
// out of live dispatch; every event up to lagFrom is then handled, unless
// the log lost some of it (the watcher then catches up from pos).
func (w *Watcher) drain(ctx context.Context, batch []*hub.Published) liveEnd {
	batch, lost := w.e.Take(batch)
	if !w.deliverAll(ctx, batch) {
		return liveEnded
	}
	w.e.DropToken()
	if !lost {
		w.pos = max(w.pos, w.e.LagFrom())
	}
	return liveLagged
}
