package cacher_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/storage/counting"
)

// Watchers that fell out of the cache's history (slow clients) catch up
// through one shared read of etcd's history, not one storage watch each:
// each gets exactly the events it missed, in order.
func TestFallBehindCatchUpIsShared(t *testing.T) {
	const n, writes = 1000, 200
	store := counting.New(newStore(t, embedtest.Prefix(t), false))
	c := startCacher(t, store, func(cfg *cacher.Config) {
		cfg.HistoryMinCapacity, cfg.HistoryMaxCapacity, cfg.HistoryWindow = 16, 16, time.Nanosecond
		cfg.WatcherBufferSize = 8
	})
	var rv uint64
	for _, name := range names(3) {
		rv = create(t, c, "ns", name, nil)
	}
	watches := make([]watch.Interface, n)
	for i := range watches {
		watches[i] = watchAll(t, c, rvAt(rv))
	}
	before := store.Counts()
	// Nobody reads: every watcher lags and its position leaves the cache's
	// history (16 events) long before the last write.
	want := make([]uint64, 0, writes)
	for i := range writes {
		want = append(want, bump(t, c, "ns", names(3)[i%3]))
	}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i, w := range watches {
		wg.Go(func() {
			// A stall fails the watcher, not the time the whole catch-up
			// takes: delivering 200,000 events under -race takes seconds
			// on an idle machine and scales with its load.
			stalled := time.NewTimer(30 * time.Second)
			defer stalled.Stop()
			for k := 0; k < len(want); {
				stalled.Reset(30 * time.Second)
				select {
				case ev := <-w.ResultChan():
					if ev.Type == watch.Bookmark {
						continue
					}
					if ev.Type == watch.Error {
						errs <- fmt.Errorf("watcher %d: error %v", i, ev.Object)
						return
					}
					if got := rvOf(t, ev.Object); ev.Type != watch.Modified || got != want[k] {
						errs <- fmt.Errorf("watcher %d: event %d is %s at RV %d, want MODIFIED at %d", i, k, ev.Type, got, want[k])
						return
					}
					k++
				case <-stalled.C:
					errs <- fmt.Errorf("watcher %d: only %d of %d events, then none for 30 s", i, k, len(want))
					return
				}
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	used := store.Counts().Sub(before)
	opened := used.Watches
	t.Logf("%d watchers %d events behind caught up in %v with %d storage watches and %d list pages",
		n, writes, took, opened, used.Lists)
	if opened > 2 {
		t.Fatalf("%d storage watches opened for the catch-up of %d watchers, want at most 2", opened, n)
	}
}
