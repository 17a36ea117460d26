package cacher_test

import (
	"errors"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/storage"
)

// After a restart, a watch resumed from an RV older than the new cache's
// first list takes a catch-up slot (MaxCatchUpStreams), catches up through
// the shared read of that history (feed_history.go) and joins live
// dispatch: from then on it needs no storage watch, so the slot is free for
// the next resumed watch, which would otherwise get 429 for as long as the
// first one stays open.
func TestRestartResumeReleasesCatchUpSlot(t *testing.T) {
	prefix := embedtest.Prefix(t)
	store := newStore(t, prefix, false)
	first, err := cacher.New(cacher.Config{Storage: store, ResourcePrefix: "/widgets",
		NewFunc: func() runtimeObject { return newWidget() }, NewListFunc: newWidgetList})
	if err != nil {
		t.Fatal(err)
	}
	stop := runCacher(t, first)
	if err := first.WaitReady(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	from := create(t, first, "fan", "a", nil)
	create(t, first, "elsewhere", "b", nil)
	stop()
	for range 10 { // writes elsewhere while no cacher runs
		bump(t, store, "elsewhere", "b")
	}
	second := startCacher(t, store, func(cfg *cacher.Config) {
		cfg.MaxCatchUpStreams = 1
		cfg.CatchUpWaitTimeout = 100 * time.Millisecond
	})
	opts := storage.ListOptions{ResourceVersion: storage.RVAt(from), Recursive: true, Predicate: storage.Everything}
	w1, err := second.Watch(testCtx(t), "/widgets/fan", opts)
	if err != nil {
		t.Fatalf("first resumed watch: %v", err)
	}
	t.Cleanup(w1.Stop)
	var w2 watch.Interface
	for deadline := time.Now().Add(10 * time.Second); w2 == nil; {
		w, err := second.Watch(testCtx(t), "/widgets/fan", opts)
		switch {
		case err == nil:
			w2 = w
			t.Cleanup(w.Stop)
		case !errors.Is(err, storage.ErrTooManyRequests):
			t.Fatalf("second resumed watch: %v", err)
		case time.Now().After(deadline):
			t.Fatalf("second resumed watch still refused after 10 s: %v", err)
		}
	}
	live := bump(t, second, "fan", "a")
	expectRVs(t, w1, []uint64{live})
	expectRVs(t, w2, []uint64{live})
}
