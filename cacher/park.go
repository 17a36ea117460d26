package cacher

import (
	"context"
)

// An idle watcher needs no goroutine. Every Config.IdleWatcherParkDelay,
// parkLoop asks the goroutines of the watchers in live dispatch that did
// not deliver anything since its last round to park. One whose watcher has
// nothing queued does: it puts the watcher in direct mode (the dispatcher
// sends straight to result) and exits, and the watch lives on as state
// only, registered for live dispatch. Whatever the goroutine would have
// woken for starts a new one, under dispatchMu so that exactly one runs:
// the dispatcher queueing to the watcher (result was full) or taking it out
// of live dispatch (offer, lag), the watch's context ending, or the time of
// its deadline bookmark. A watch that receives nothing then costs its
// state and channels, not a goroutine and its stack.
//
// The watch's logical lifetime, not its goroutines, is counted in
// Cacher.wg: startWatcher adds it and finish releases it.

// parkLoop asks, every IdleWatcherParkDelay until ctx ends, the goroutine
// of every watcher in live dispatch that delivered nothing since the last
// round to park if it can (parkAsk, and a token on input.ready to wake it).
func (c *Cacher) parkLoop(ctx context.Context) {
	d := c.cfg.IdleWatcherParkDelay
	if d < 0 {
		return
	}
	t := c.clk.sched.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		c.dispatchMu.Lock()
		for w := range c.reg.all {
			if w.parked || w.busy.Swap(false) {
				continue
			}
			w.parkAsk.Store(true)
			w.input.signal()
		}
		c.dispatchMu.Unlock()
	}
}

// liveEnd is how live returns.
type liveEnd int

const (
	liveEnded  liveEnd = iota // the watch ended
	liveLagged                // the watcher left live dispatch: catch up
	liveParked                // the goroutine parked: it must exit now
)

// parkIfAsked parks the watcher if parkLoop asked it to and it is idle in
// live dispatch: registered, nothing queued; it then enters direct mode
// (true: the calling goroutine, which holds no event, must exit without
// touching the watcher again).
func (w *watcher) parkIfAsked(ctx context.Context) bool {
	if !w.parkAsk.Load() {
		return false
	}
	w.c.dispatchMu.Lock()
	defer w.c.dispatchMu.Unlock()
	w.parkAsk.Store(false)
	// A context that ended before this point may have found the watcher
	// unparked already (its wake-up takes dispatchMu): stay.
	if !w.c.reg.has(w) || ctx.Err() != nil || len(w.lagged) != 0 || !w.input.empty() {
		return false
	}
	w.direct = true
	w.parked = true
	if !w.bookmarkAt.IsZero() {
		w.parkTimer = w.c.clk.wall.AfterFunc(w.bookmarkAt.Sub(w.c.clk.wall.Now()), w.wakeAsync)
	}
	return true
}

// wakeAsync wakes the watcher from a timer or context callback.
func (w *watcher) wakeAsync() {
	w.c.dispatchMu.Lock()
	w.wake()
	w.c.dispatchMu.Unlock()
}

// wake starts a goroutine for a parked watcher (dispatchMu held); it
// resumes in live dispatch, where it finds what woke it.
func (w *watcher) wake() {
	if !w.parked {
		return
	}
	w.parked = false
	if w.parkTimer != nil {
		w.parkTimer.Stop()
		w.parkTimer = nil
	}
	go w.follow(w.ctx, false)
}
