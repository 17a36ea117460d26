package watcher

import (
	"context"
)

// Parking (see the hub package): an idle watcher in live dispatch gives
// up its goroutine when the hub's park loop asks, and the hub starts a new
// one (Resume) for whatever the goroutine would have woken for. The
// watch's logical lifetime, not its goroutines, is what the cacher counts
// until finish calls release.

// liveEnd is how live returns.
type liveEnd int

const (
	liveEnded  liveEnd = iota // the watch ended
	liveLagged                // the watcher left live dispatch: catch up
	liveParked                // the goroutine parked: it must exit now
)

// parkIfAsked parks the watcher if the park loop asked it to and it is
// idle in live dispatch: registered, nothing to take from the log; the
// hub then delivers for it (true: the calling goroutine, which holds no
// event, must exit without touching the watcher again).
func (w *Watcher) parkIfAsked(ctx context.Context) bool {
	if !w.e.ParkAsked() {
		return false
	}
	return w.env.Hub.Park(ctx, w.e, w.BookmarkAt)
}

// WakeAsync wakes the watcher if parked, from a timer or context callback.
func (w *Watcher) WakeAsync() { w.env.Hub.WakeAsync(w.e) }
