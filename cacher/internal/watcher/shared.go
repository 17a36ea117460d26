package watcher

import (
	"context"
	"time"

	"github.com/listwatch/listwatch/cacher/internal/history"
)

// The watcher's side of the shared catch-up after a relist (see
// the cacher's feed_history.go): replaying a shared history, filtered as live events are.

// replayShared replays g's events after pos until pos reaches g.Until
// (true: the cache takes over) or g cannot serve the watcher any more
// (true: the caller finds another source); false when the watch ended.
func (w *Watcher) replayShared(ctx context.Context, g *history.Shared) bool {
	// A shared read may still be listing its first state.
	if !w.waitShared(ctx, g, w.pos) {
		return false
	}
	for ctx.Err() == nil {
		if w.pos >= g.Until || g.Failed() {
			return true
		}
		evs, r, err := g.Cache.EventsSince(w.pos, w.env.CatchUpBatch)
		if err != nil {
			w.noShared = g
			return true
		}
		if len(evs) == 0 {
			w.pos = max(w.pos, min(r, g.Until))
			if w.pos < g.Until && !w.waitShared(ctx, g, w.pos+1) {
				return false
			}
			continue
		}
		for _, ev := range evs {
			if !w.deliver(ctx, ev) {
				return false
			}
		}
		// The batch ends with a whole revision: once the shared read holds it
		// completely, it is delivered completely.
		last := evs[len(evs)-1].RV
		if last <= r {
			w.pos = max(w.pos, last)
		} else if !w.waitShared(ctx, g, last) {
			// The newest revision is still arriving: wait for its end.
			return false
		}
	}
	return false
}

// waitShared waits until g holds every revision up to rv, g fails or the
// watch ends (false).
func (w *Watcher) waitShared(ctx context.Context, g *history.Shared, rv uint64) bool {
	for ctx.Err() == nil && !g.Failed() {
		step, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
		err := g.Cache.WaitUntilFresh(step, rv)
		cancel()
		if err == nil {
			return true
		}
	}
	return ctx.Err() == nil
}
