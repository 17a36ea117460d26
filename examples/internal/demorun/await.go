package demorun

import (
	"context"
	"fmt"
	"time"
)

// Await polls cond, which should read memory only (informers, recorded
// reports), every 20 ms until it holds, or fails once timeout has passed
// or ctx ended.
func Await(ctx context.Context, timeout time.Duration, what string, cond func() bool) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			return fmt.Errorf("timed out after %s waiting for %s", timeout, what)
		case <-tick.C:
		}
	}
	return nil
}
