package replication

import (
	"sync"
)

// SlowStartInitialBatch is the first batch's size.
const SlowStartInitialBatch = 1

// SlowStart calls fn count times in batches of growing size (1, 2, 4, ...
// at most what is left), each batch's calls concurrently, and stops after
// the first batch with a failure: a controller whose creates all fail
// (a quota, a bad template) sends a few requests, not count. It returns
// how many calls succeeded and the first error. The calls it skipped are
// count - successes - (failures of the last batch).
func SlowStart(count int, fn func() error) (successes int, err error) {
	batch := min(count, SlowStartInitialBatch)
	for left := count; left > 0; batch = min(2*batch, left) {
		errs := make(chan error, batch)
		var wg sync.WaitGroup
		for range batch {
			wg.Go(func() { errs <- fn() })
		}
		wg.Wait()
		close(errs)
		var first error
		for e := range errs {
			if e == nil {
				successes++
			} else if first == nil {
				first = e
			}
		}
		if first != nil {
			return successes, first
		}
		left -= batch
	}
	return successes, nil
}
