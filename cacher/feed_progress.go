package cacher

import (
	"context"
	"time"
)

// progressLoop asks the storage for progress notifications every
// ProgressInterval, and at once when a reader waits for freshness, so the
// cache RV advances without writes.
func (f *feed) progressLoop(ctx context.Context) {
	t := f.clk.sched.NewTicker(f.cfg.ProgressInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
		case <-f.progressWanted:
		}
		if err := f.store.RequestWatchProgress(ctx); err != nil && ctx.Err() == nil {
			f.log.Debug("cacher: progress request failed", "err", err)
		}
	}
}

// WantProgress pokes the progress loop without blocking.
func (f *feed) WantProgress() {
	select {
	case f.progressWanted <- struct{}{}:
	default:
	}
}

// waitFresh waits until the cache reaches rv, for at most timeout, asking
// the progress loop for a progress notification every 50 ms meanwhile.
func (f *feed) waitFresh(ctx context.Context, rv uint64, timeout time.Duration) error {
	if cur, ready := f.cache.RV(); ready && cur >= rv {
		return nil
	}
	start := f.clk.sched.Now()
	defer func() { f.cfg.Metrics.ReadWait(f.clk.sched.Since(start)) }()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		f.WantProgress()
		step, stepCancel := context.WithTimeout(ctx, 50*time.Millisecond)
		err := f.cache.WaitUntilFresh(step, rv)
		stepCancel()
		if err == nil || ctx.Err() != nil {
			return err
		}
	}
}
