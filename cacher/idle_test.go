package cacher_test

import (
	"context"
	"runtime"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/storage"
)

// waitGoroutines waits until at most n goroutines run.
func waitGoroutines(t *testing.T, n int, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > n {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d goroutines, want at most %d", what, runtime.NumGoroutine(), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestIdleWatchersHoldNoGoroutine: idle watchers give up their goroutines
// once they joined live dispatch, and such a watch still gets every event,
// in order, ends when its context does, and Stop returns.
func TestIdleWatchersHoldNoGoroutine(t *testing.T) {
	c := startCacher(t, newStore(t, embedtest.Prefix(t), false))
	const n = 40
	objs := names(n)
	var rv uint64
	for _, name := range objs {
		rv = create(t, c, "ns", name, nil)
	}
	base := runtime.NumGoroutine()
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	ws := make([]watch.Interface, n)
	for i, name := range objs {
		w, err := c.Watch(ctx, key("ns", name), storage.ListOptions{ResourceVersion: storage.RVAt(rv),
			Predicate: storage.Everything})
		if err != nil {
			t.Fatal(err)
		}
		ws[i] = w
	}
	all := watchAll(t, c, rvAt(rv))
	waitGoroutines(t, base+2, "idle watchers without goroutines")

	var rvs []uint64
	for i, name := range objs {
		r := bump(t, c, "ns", name)
		rvs = append(rvs, r)
		expectRVs(t, ws[i], []uint64{r})
	}
	expectRVs(t, all, rvs)
	waitGoroutines(t, base+2, "watchers without goroutines again after their events")

	// Half end by Stop, half by their context, all without a goroutine.
	for _, w := range ws[:n/2] {
		w.Stop()
		if _, ok := <-w.ResultChan(); ok {
			t.Fatal("a stopped watch delivered an event")
		}
	}
	cancel()
	for i, w := range ws[n/2:] {
		select {
		case _, ok := <-w.ResultChan():
			if ok {
				t.Fatalf("watch %d: an event after its context ended", n/2+i)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("watch %d: still open 10 s after its context ended", n/2+i)
		}
	}
}

// TestIdleWatcherLagsAndCatchesUp: a watcher without a goroutine whose
// client does not read gets one when its result channel fills, leaves live
// dispatch when what waits for it in the log passes its buffer, and still
// delivers every event in order once the client reads.
func TestIdleWatcherLagsAndCatchesUp(t *testing.T) {
	store := newStore(t, embedtest.Prefix(t), false)
	c := startCacher(t, store, func(cfg *cacher.Config) { cfg.WatcherBufferSize = 4 })
	rv := create(t, c, "ns", "a", nil)
	base := runtime.NumGoroutine()
	w := watchAll(t, c, rvAt(rv))
	waitGoroutines(t, base+1, "the watcher without a goroutine")
	var rvs []uint64
	for range 60 { // well past result (16) and the queue (4)
		rvs = append(rvs, bump(t, c, "ns", "a"))
	}
	expectRVs(t, w, rvs)
}
