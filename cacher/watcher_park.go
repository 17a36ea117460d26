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
// woken for starts a new one, under the hub's lock so that exactly one runs:
// the dispatcher queueing to the watcher (result was full) or taking it out
// of live dispatch (offer, lag), the watch's context ending, or the time of
// its deadline bookmark. A watch that receives nothing then costs its
// state and channels, not a goroutine and its stack.
//
// The watch's logical lifetime, not its goroutines, is counted in
// Cacher.wg: startWatcher adds it and finish releases it.

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
	return w.env.hub.park(ctx, w)
}

// wakeAsync wakes the watcher from a timer or context callback.
func (w *watcher) wakeAsync() {
	w.env.hub.wakeAsync(w)
}

// wake starts a goroutine for a parked watcher (hub.mu held); it
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
