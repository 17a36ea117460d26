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
// (initial events, catch-up from history, live dispatch) that
// reads history through its Env's Source and joins and leaves live
// dispatch through its Env's Hub; it knows nothing else of the cacher.
//
// A watcher has a goroutine only while it has work (see the hub's
// handoff.go): run, from Start until it joins live dispatch, and live,
// started by the hub (Resume) for what the hub cannot deliver without
// blocking. The goroutine owns the delivery state (and the cursor into the
// hub's log) and sends on result, which finish closes; while there is
// none, the hub owns them and, under its lock, calls DeliverDirect or
// DrainDirect, which send on result without blocking. The hub owns e's
// dispatch state. Only the cacher's Watch creates watchers; their clients
// call ResultChan and Stop.
type Watcher struct {
	env *Env
	e   *hub.Entry
	// Encoded: objects go out as *storage.EncodedObject (WatchEncoded).
	// Set before Start.
	Encoded bool
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

	// Owned by the goroutine (or the hub while there is none, see above):
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

// SetDeadlineBookmark sets when to send the bookmark that precedes the
// watch's deadline (see storage.DeadlineBookmarkTime); before Start. The
// hub's entry keeps it (Entry.DeadlineBookmark): the hub sends it while
// the watcher is live, its goroutine while it catches up.
func (w *Watcher) SetDeadlineBookmark(at time.Time) { w.e.SetDeadlineBookmark(at) }

// Abort implements hub.Member: it ends the watch with cause.
func (w *Watcher) Abort(cause error) { w.abort(cause) }

// Resume implements hub.Member: a goroutine for the watcher, which has
// none, in live dispatch (the hub's lock held). A watcher not started
// (dispatch's tests) gets none: the test takes from the log itself.
func (w *Watcher) Resume() {
	if w.ctx != nil {
		go w.follow(w.ctx, false)
	}
}

// Wake makes sure a goroutine looks at the watcher, from a context
// callback: its context ended.
func (w *Watcher) Wake() { w.env.Hub.Wake(w.e) }

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
	if (w.Plan.Initial != nil && !w.sendInitial(ctx)) || (w.Plan.StorageInitial && !w.initialFromStorage(ctx)) {
		w.finish(ctx)
		return
	}
	w.follow(ctx, true)
}

// follow alternates catching up from history and following live dispatch
// (starting with live dispatch unless catchUpFirst) until the watch ends
// or the goroutine hands delivery to the hub.
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
		case liveHandedBack:
			return
		}
	}
}

// liveEnd is how live returns.
type liveEnd int

const (
	liveEnded      liveEnd = iota // the watch ended
	liveLagged                    // the watcher left live dispatch: catch up
	liveHandedBack                // the hub delivers: the goroutine must exit now
)

// live takes everything the hub's log holds for the watcher and delivers
// it, waiting for its client, until it has nothing left to take and hands
// delivery to the hub (the goroutine then exits), lags or ends.
func (w *Watcher) live(ctx context.Context) liveEnd {
	var batch []*hub.Published
	for {
		if ctx.Err() != nil {
			return liveEnded
		}
		select {
		case <-w.e.Lagged():
			return w.drain(ctx, batch)
		default:
		}
		var lost bool
		batch, lost = w.e.Take(batch)
		if !w.deliverAll(ctx, batch) {
			return liveEnded
		}
		if lost {
			// Fell behind the log: the cache's history has the rest.
			w.env.Hub.Lag(w.e, w.pos)
			return liveLagged
		}
		if w.e.Release() {
			return liveHandedBack
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
	if !lost {
		w.pos = max(w.pos, w.e.LagFrom())
	}
	return liveLagged
}
