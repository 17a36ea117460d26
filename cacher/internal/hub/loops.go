package hub

import (
	"context"
	"time"

	"k8s.io/utils/clock"
)

// The hub's bookmark schedule, run by the cacher's Run on its Config.Clock.

// BookmarkSlots is how many groups the watchers that allow bookmarks are
// spread over: each BookmarkInterval is cut into this many steps, and at
// each step one group gets its bookmark, so that 10,000 idle watchers cost
// about 10,000 bookmarks a minute, spread evenly, not 10,000 at once.
const BookmarkSlots = 60

// minBookmarkStep bounds how often the bookmark loop wakes when
// BookmarkInterval is short (tests).
const minBookmarkStep = 10 * time.Millisecond

// BookmarkLoop returns the loop that sends each live watcher that allows
// bookmarks one at the cache RV (Config.CacheRV, read in the commit) about every
// interval (Config.BookmarkInterval), as Kubernetes does: the interval is
// cut into steps (BookmarkSlots, fewer when the interval is shorter than
// BookmarkSlots·minBookmarkStep) and each watcher belongs to one (picked at
// random when it is created, see Spec.BookmarkSlot). Steps are counted
// on the clock from the call, not by ticks, so that a late or missed tick
// only delays its step. Run calls it before the cache can become ready, so
// that the schedule's start does not depend on when the loop's goroutine
// is first scheduled (a fake clock stepped right after WaitReady counts
// from here); the loop runs until ctx ends.
func (h *Hub) BookmarkLoop(clk clock.WithTicker, interval time.Duration) func(ctx context.Context) {
	steps := int64(max(min(interval/minBookmarkStep, BookmarkSlots), 1))
	step := interval / time.Duration(steps)
	t := clk.NewTicker(step)
	start := clk.Now()
	return func(ctx context.Context) {
		defer t.Stop()
		var done int64 // steps handled since start
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C():
			}
			due := int64(clk.Since(start) / step)
			done = max(done, due-steps) // a whole round at most
			_ = h.Commit(func(tx Tx) error {
				rv, ready := h.cacheRV()
				for ; done < due; done++ {
					for slot := int(done % steps); ready && slot < BookmarkSlots; slot += int(steps) {
						tx.bookmark(slot, rv)
					}
				}
				return nil
			})
		}
	}
}
