package cacher_test

import (
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/storage/counting"
)

// Watchers that fell out of the cache's history at different positions
// still catch up through the shared reads (at most 2 storage watches), not
// one storage watch each: groups of watchers start at different revisions,
// nobody reads while the writes push all of them out of the history, and
// then the groups read one after the other, the newest first, so that the
// first to ask is the one furthest ahead. Each gets exactly its events, in
// order.
func TestFallBehindAtDifferentPositionsIsShared(t *testing.T) {
	const groups, perGroup, stride, writes = 5, 40, 20, 200
	store := counting.New(newStore(t, embedtest.Prefix(t), false))
	c := startCacher(t, store, func(cfg *cacher.Config) {
		cfg.HistoryMinCapacity, cfg.HistoryMaxCapacity, cfg.HistoryWindow = 16, 16, time.Nanosecond
		cfg.WatcherBufferSize = 8
	})
	objs := names(3)
	var rv uint64
	for _, name := range objs {
		rv = create(t, c, "ns", name, nil)
	}
	before := store.Counts()
	// all lists every write's RV; group j watches from the RV before
	// all[first[j]] and lags at a position of its own.
	var all []uint64
	watches := make([][]watch.Interface, groups)
	first := make([]int, groups)
	for j := range groups {
		for range perGroup {
			watches[j] = append(watches[j], watchAll(t, c, rvAt(rv)))
		}
		first[j] = len(all)
		n := stride
		if j == groups-1 {
			n = writes
		}
		for range n {
			rv = bump(t, c, "ns", objs[len(all)%len(objs)])
			all = append(all, rv)
		}
	}
	start := time.Now()
	for j := groups - 1; j >= 0; j-- {
		var wg sync.WaitGroup
		errs := make(chan error, perGroup)
		for i, w := range watches[j] {
			wg.Go(func() {
				if err := readModified(w, all[first[j]:], 30*time.Second); err != nil {
					errs <- fmt.Errorf("group %d watcher %d: %w", j, i, err)
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	}
	took := time.Since(start)
	used := store.Counts().Sub(before)
	t.Logf("%d groups of %d watchers behind at different positions caught up in %v with %d storage watches and %d list pages",
		groups, perGroup, took, used.Watches, used.Lists)
	if used.Watches > 2 {
		t.Fatalf("%d storage watches opened for the catch-up of %d groups of watchers behind at different positions, want at most 2",
			used.Watches, groups)
	}
}

// readModified reads from w exactly the MODIFIED events at the RVs want,
// in order, skipping bookmarks.
func readModified(w watch.Interface, want []uint64, timeout time.Duration) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for k := 0; k < len(want); {
		select {
		case ev := <-w.ResultChan():
			if ev.Type == watch.Bookmark {
				continue
			}
			if ev.Type == watch.Error {
				return fmt.Errorf("error %v", ev.Object)
			}
			got, err := objectRV(ev.Object)
			if err != nil {
				return err
			}
			if ev.Type != watch.Modified || got != want[k] {
				return fmt.Errorf("event %d is %s at RV %d, want MODIFIED at %d", k, ev.Type, got, want[k])
			}
			k++
		case <-deadline.C:
			return fmt.Errorf("only %d of %d events", k, len(want))
		}
	}
	return nil
}

// objectRV reads an object's RV (rvOf for goroutines other than the test's).
func objectRV(obj runtime.Object) (uint64, error) {
	a, err := meta.Accessor(obj)
	if err != nil {
		return 0, err
	}
	return strconv.ParseUint(a.GetResourceVersion(), 10, 64)
}
