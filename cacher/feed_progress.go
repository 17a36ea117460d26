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
