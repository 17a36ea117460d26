package cacher_test

import (
	"errors"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/storage/counting"
)

// A watch resumed from an RV the cache's history holds is served without
// any request reaching etcd.
func TestResumeFromCacheWithoutEtcd(t *testing.T) {
	store := counting.New(newStore(t, embedtest.Prefix(t), false))
	c := startCacher(t, store)
	from := create(t, c, "ns", "a", nil)
	var want []uint64
	for range 20 {
		want = append(want, bump(t, c, "ns", "a"))
	}
	watches, lists, gets := store.Counts().Watches, store.Counts().Lists, store.Counts().Gets
	w := watchAll(t, c, rvAt(from))
	expectRVs(t, w, want)
	if store.Counts().Watches != watches || store.Counts().Lists != lists || store.Counts().Gets != gets {
		t.Fatalf("resume reached etcd: watches %d→%d lists %d→%d gets %d→%d", watches, store.Counts().Watches,
			lists, store.Counts().Lists, gets, store.Counts().Gets)
	}
}

// A watch from an RV older than the cache's history is caught up from
// etcd's history, then continues live from the cache.
func TestCatchUpFromEtcdHistory(t *testing.T) {
	store := counting.New(newStore(t, embedtest.Prefix(t), false))
	c := startCacher(t, store, func(cfg *cacher.Config) {
		cfg.HistoryMinCapacity, cfg.HistoryMaxCapacity = 8, 8
	})
	from := create(t, c, "ns", "a", nil)
	var want []uint64
	for range 40 {
		want = append(want, bump(t, c, "ns", "a"))
	}
	watches := store.Counts().Watches
	w := watchAll(t, c, rvAt(from))
	expectRVs(t, w, want)
	if got := store.Counts().Watches - watches; got != 1 {
		t.Fatalf("catch-up used %d storage watches, want 1", got)
	}
	live := bump(t, c, "ns", "a")
	expectRVs(t, w, []uint64{live})
}

// After a restart, a watch resumes from an RV older than the new cache's
// first list (kubernetes#129194 answers 410 there).
func TestRestartResumesOlderThanFirstList(t *testing.T) {
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
	from := create(t, first, "ns", "a", nil)
	stop()
	var want []uint64
	for range 10 { // writes while no cacher runs (another replica, say)
		want = append(want, bump(t, store, "ns", "a"))
	}
	second := startCacher(t, store)
	w := watchAll(t, second, rvAt(from))
	expectRVs(t, w, want)
	want = []uint64{bump(t, second, "ns", "a")}
	expectRVs(t, w, want)
}

// A watcher that does not read while many events arrive is neither blocked
// on nor ended: it catches up from history and gets every event in order,
// while a fast watcher keeps up.
func TestSlowWatcherCatchesUp(t *testing.T) {
	m := &countingMetrics{}
	c := startCacher(t, newStore(t, embedtest.Prefix(t), false), func(cfg *cacher.Config) {
		cfg.WatcherBufferSize = 4
		cfg.Metrics = m
	})
	from := create(t, c, "ns", "a", nil)
	slow := watchAll(t, c, rvAt(from))
	fast := watchAll(t, c, rvAt(from))
	fastDone := make(chan []uint64, 1)
	go func() {
		var got []uint64
		for ev := range fast.ResultChan() {
			if ev.Type != watch.Bookmark {
				got = append(got, rvOf(t, ev.Object))
			}
			if len(got) == 100 {
				break
			}
		}
		fastDone <- got
	}()
	var want []uint64
	for range 100 {
		want = append(want, bump(t, c, "ns", "a"))
	}
	select {
	case got := <-fastDone:
		if len(got) != 100 || got[99] != want[99] {
			t.Fatalf("fast watcher got %d events, last %v", len(got), got[len(got)-1:])
		}
	case <-time.After(20 * time.Second):
		t.Fatal("fast watcher was held up by the slow one")
	}
	expectRVs(t, slow, want)
	if m.lagged.Load() == 0 {
		t.Fatal("the slow watcher never left live dispatch; the test did not exercise catch-up")
	}
	if m.terminated.Load() != 0 {
		t.Fatalf("%d watchers terminated", m.terminated.Load())
	}
}

// A lagging watcher whose next events etcd has compacted ends with one
// 410 error event, then its channel closes.
func TestLaggingWatcherCompactedGets410(t *testing.T) {
	c := startCacher(t, newStore(t, embedtest.Prefix(t), false), func(cfg *cacher.Config) {
		cfg.WatcherBufferSize = 2
		cfg.HistoryMinCapacity, cfg.HistoryMaxCapacity = 8, 8
	})
	from := create(t, c, "ns", "a", nil)
	w := watchAll(t, c, rvAt(from))
	var last uint64
	for range 60 {
		last = bump(t, c, "ns", "a")
	}
	if err := etcd.Compact(testCtx(t), int64(last)); err != nil {
		t.Fatal(err)
	}
	prev := from
	for {
		ev := next(t, w, 10*time.Second)
		if ev.Type == watch.Error {
			st, ok := ev.Object.(*metav1.Status)
			if !ok || st.Code != 410 || !apierrors.IsResourceExpired(&apierrors.StatusError{ErrStatus: *st}) {
				t.Fatalf("error event %#v, want 410 Expired", ev.Object)
			}
			break
		}
		rv := rvOf(t, ev.Object)
		if rv <= prev {
			t.Fatalf("event at RV %d after %d", rv, prev)
		}
		prev = rv
	}
	select {
	case _, ok := <-w.ResultChan():
		if ok {
			t.Fatal("event after the error event")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("channel not closed after the error event")
	}
}

// Beyond MaxCatchUpStreams, a watch that needs etcd's history waits, then
// gets 429 with Retry-After.
func TestCatchUpStreamsAreBounded(t *testing.T) {
	c := startCacher(t, newStore(t, embedtest.Prefix(t), false), func(cfg *cacher.Config) {
		cfg.HistoryMinCapacity, cfg.HistoryMaxCapacity = 4, 4
		cfg.MaxCatchUpStreams = 1
		cfg.CatchUpWaitTimeout = 100 * time.Millisecond
	})
	from := create(t, c, "ns", "a", nil)
	for range 100 {
		bump(t, c, "ns", "a")
	}
	first := watchAll(t, c, rvAt(from)) // never read: it keeps its catch-up stream
	_ = first
	_, err := c.Watch(testCtx(t), "/widgets", storage.ListOptions{ResourceVersion: storage.RVAt(from), Recursive: true})
	var se *storage.Error
	if !errors.Is(err, storage.ErrTooManyRequests) || !errors.As(err, &se) || se.RetryAfterSeconds < 1 {
		t.Fatalf("second catch-up watch: %v, want 429 with Retry-After", err)
	}
	if !apierrors.IsTooManyRequests(err) {
		t.Fatalf("apierrors.IsTooManyRequests(%v) is false", err)
	}
}

// Stopping the cacher closes every watch's channel.
func TestShutdownClosesWatchers(t *testing.T) {
	store := newStore(t, embedtest.Prefix(t), false)
	c, err := cacher.New(cacher.Config{Storage: store, ResourcePrefix: "/widgets",
		NewFunc: func() runtimeObject { return newWidget() }, NewListFunc: newWidgetList})
	if err != nil {
		t.Fatal(err)
	}
	stop := runCacher(t, c)
	if err := c.WaitReady(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	var ws []watch.Interface
	for range 5 {
		ws = append(ws, watchAll(t, c, storage.RV{}))
	}
	stop()
	for i, w := range ws {
		select {
		case _, ok := <-w.ResultChan():
			for ok {
				_, ok = <-w.ResultChan()
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("watch %d not closed after Run returned", i)
		}
	}
	if _, err := c.Watch(testCtx(t), "/widgets", storage.ListOptions{Recursive: true}); !errors.Is(err, storage.ErrNotReady) {
		t.Fatalf("Watch after stop: %v, want not ready", err)
	}
}
