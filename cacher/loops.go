package cacher

import (
	"context"
	"time"
)

// progressLoop asks the storage for progress notifications every
// ProgressInterval, and at once when a reader waits for freshness, so the
// cache RV advances without writes.
func (c *Cacher) progressLoop(ctx context.Context) {
	t := c.clk.sched.NewTicker(c.cfg.ProgressInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		case <-c.progressWanted:
		}
		if err := c.store.RequestWatchProgress(ctx); err != nil && ctx.Err() == nil {
			c.log.Debug("cacher: progress request failed", "err", err)
		}
	}
}

// wantProgress pokes the progress loop without blocking.
func (c *Cacher) wantProgress() {
	select {
	case c.progressWanted <- struct{}{}:
	default:
	}
}

// bookmarkSlots is how many groups the watchers that allow bookmarks are
// spread over: each BookmarkInterval is cut into this many steps, and at
// each step one group gets its bookmark, so that 10,000 idle watchers cost
// about 10,000 bookmarks a minute, spread evenly, not 10,000 at once.
const bookmarkSlots = 60

// minBookmarkStep bounds how often the bookmark loop wakes when
// BookmarkInterval is short (tests).
const minBookmarkStep = 10 * time.Millisecond

// bookmarkLoop sends each live watcher that allows bookmarks one at the
// cache RV about every BookmarkInterval, as Kubernetes does: the interval
// is cut into steps (bookmarkSlots, fewer when the interval is shorter than
// bookmarkSlots·minBookmarkStep) and each watcher belongs to one (picked at
// random when it is created, see registry.bookmarkSlots). Steps are counted
// on the clock, not by ticks, so that a late or missed tick only delays
// its step.
func (c *Cacher) bookmarkLoop(ctx context.Context) {
	steps := int64(max(min(c.cfg.BookmarkInterval/minBookmarkStep, bookmarkSlots), 1))
	step := c.cfg.BookmarkInterval / time.Duration(steps)
	t := c.clk.sched.NewTicker(step)
	defer t.Stop()
	start := c.clk.sched.Now()
	var done int64 // steps handled since start
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		}
		due := int64(c.clk.sched.Since(start) / step)
		done = max(done, due-steps) // a whole round at most
		c.dispatchMu.Lock()
		rv, ready := c.cache.RV()
		for ; done < due; done++ {
			for slot := int(done % steps); ready && slot < bookmarkSlots; slot += int(steps) {
				c.reg.bookmark(slot, rv)
			}
		}
		c.dispatchMu.Unlock()
	}
}

// waitFresh waits until the cache reaches rv, for at most timeout, asking
// the progress loop for a progress notification every 50 ms meanwhile.
func (c *Cacher) waitFresh(ctx context.Context, rv uint64, timeout time.Duration) error {
	if cur, ready := c.cache.RV(); ready && cur >= rv {
		return nil
	}
	start := c.clk.sched.Now()
	defer func() { c.cfg.Metrics.ReadWait(c.clk.sched.Since(start)) }()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		c.wantProgress()
		step, stepCancel := context.WithTimeout(ctx, 50*time.Millisecond)
		err := c.cache.WaitUntilFresh(step, rv)
		stepCancel()
		if err == nil || ctx.Err() != nil {
			return err
		}
	}
}
