package hub

import (
	"context"
	"time"

	"k8s.io/utils/clock"
)

// An idle watcher needs no goroutine. Every park delay (the cacher's
// IdleWatcherParkDelay), ParkLoop asks the goroutines of the watchers in
// live dispatch that did not deliver anything since its last round to
// park. One whose watcher has nothing to take from the log does (Park):
// the hub delivers for it (see handoff.go) and the goroutine exits; the
// watch lives on as state only, registered for live dispatch. Whatever the
// goroutine would have woken for starts a new one (Member.Resume), under
// the hub's lock so that exactly one runs: an entry its client's channel
// has no room for, dispatch taking the watcher out of live dispatch
// (lag), the watch's context ending (WakeAsync), or the time of its
// deadline bookmark. A watch that receives nothing then costs its state
// and channels, not a goroutine and its stack.

// Park parks e if it is idle in live dispatch: registered, nothing to
// take from the log, not lagged, ctx not ended; the hub then delivers for
// it, and its deadline bookmark, if any (bookmarkAt not zero), wakes it
// (true: the calling goroutine must exit without touching the watcher
// again).
func (h *Hub) Park(ctx context.Context, e *Entry, bookmarkAt time.Time) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	e.parkAsk.Store(false)
	// A context that ended before this point may have found the watcher
	// unparked already (its wake-up takes mu): stay.
	if !h.reg.has(e) || ctx.Err() != nil || len(e.lagged) != 0 || e.from.Load() != 0 {
		return false
	}
	e.setDelivery(true)
	e.parked = true
	if !bookmarkAt.IsZero() {
		// The callback wakes e from a goroutine of its own: a fake clock
		// runs callbacks holding its lock, which wake (stopping the timer)
		// and Park (starting one) take while holding mu.
		e.parkTimer = h.wall.AfterFunc(bookmarkAt.Sub(h.wall.Now()), func() { go h.WakeAsync(e) })
	}
	return true
}

// WakeAsync wakes e if parked, from a timer or context callback.
func (h *Hub) WakeAsync(e *Entry) {
	h.mu.Lock()
	e.unpark()
	h.mu.Unlock()
}

// unpark starts a goroutine for a parked watcher (Hub.mu held); it resumes
// in live dispatch, where it finds what woke it.
func (e *Entry) unpark() {
	if !e.parked {
		return
	}
	e.parked = false
	if e.parkTimer != nil {
		e.parkTimer.Stop()
		e.parkTimer = nil
	}
	e.member.Resume()
}

// askIdleToPark asks the goroutine of every watcher in live dispatch that
// delivered nothing since the last call to park if it can.
func (h *Hub) askIdleToPark() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for e := range h.reg.all {
		if e.parked || e.busy.Swap(false) {
			continue
		}
		e.parkAsk.Store(true)
		e.signal()
	}
}

// ParkLoop asks, every d (negative: never) until ctx ends, the goroutine
// of every watcher in live dispatch that delivered nothing since the last
// round to park if it can (parkAsk, and a token on its Ready channel to
// wake it).
func (h *Hub) ParkLoop(ctx context.Context, clk clock.WithTicker, d time.Duration) {
	if d < 0 {
		return
	}
	t := clk.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		h.askIdleToPark()
	}
}
