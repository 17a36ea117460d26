package etcd3

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
)

// etcdWatchers reads the embedded server's gauge of open watchers.
func etcdWatchers(t testing.TB) float64 {
	t.Helper()
	mfs, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "etcd_debugging_mvcc_watcher_total" {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatal("etcd_debugging_mvcc_watcher_total not found")
	return 0
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestWatchStopAndCancelReleaseEtcdWatch(t *testing.T) {
	s := newTestStore(t)
	base := etcdWatchers(t)
	for _, how := range []string{"stop", "cancel", "close"} {
		t.Run(how, func(t *testing.T) {
			ctx, cancel := context.WithCancel(testCtx(t))
			defer cancel()
			st := s
			if how == "close" {
				st = newTestStore(t)
			}
			no := false
			w, err := st.Watch(ctx, "/widgets", storage.ListOptions{Recursive: true, SendInitialEvents: &no, Predicate: storage.Everything})
			if err != nil {
				t.Fatal(err)
			}
			// The etcd watch is registered once an event can flow through it.
			c := mustCreate(t, st, "/widgets/ns/"+how, testWidget(how, nil))
			expectEvent(t, w, watch.Added, how, rvOf(t, c))
			if got := etcdWatchers(t); got != base+1 {
				t.Fatalf("etcd watchers %v, want %v", got, base+1)
			}
			switch how {
			case "stop":
				w.Stop()
			case "cancel":
				cancel()
			case "close":
				st.Close()
				if err := st.ReadinessCheck(); err == nil {
					t.Fatal("closed store reports ready")
				}
			}
			expectClosed(t, w)
			waitFor(t, "etcd to drop the watcher", func() bool { return etcdWatchers(t) == base })
			w.Stop() // idempotent after the goroutine exited
		})
	}
}

func TestWatchCompacted410(t *testing.T) {
	s := newTestStore(t)
	ctx := testCtx(t)
	first := mustCreate(t, s, "/widgets/ns/a", testWidget("a", nil))
	mustCreate(t, s, "/widgets/ns/b", testWidget("b", nil))
	mustCreate(t, s, "/widgets/ns/c", testWidget("c", nil))
	// Compacting to the current revision removes the revisions after
	// first but before the current one.
	if err := etcdServer.Compact(ctx, currentRev(t)); err != nil {
		t.Fatal(err)
	}
	w, err := s.Watch(ctx, "/widgets", storage.ListOptions{Recursive: true, ResourceVersion: rvAt(rvOf(t, first)), Predicate: storage.Everything})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ev := expectEvent(t, w, watch.Error, "", 0)
	st, ok := ev.Object.(*metav1.Status)
	if !ok || st.Code != 410 || st.Reason != metav1.StatusReasonExpired {
		t.Fatalf("error event %#v", ev.Object)
	}
	expectClosed(t, w)

	// SendInitialEvents at a compacted RV is not-older-than: the current
	// state, no 410.
	yes := true
	w2, err := s.Watch(ctx, "/widgets", storage.ListOptions{Recursive: true, ResourceVersion: rvAt(rvOf(t, first)), SendInitialEvents: &yes, Predicate: storage.Everything})
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Stop()
	for _, name := range []string{"a", "b", "c"} {
		expectEvent(t, w2, watch.Added, name, 0)
	}
}

func TestWatchProgressNotifyBookmarks(t *testing.T) {
	s := newTestStore(t)
	ctx := testCtx(t)
	c := mustCreate(t, s, "/widgets/ns/a", testWidget("a", nil))
	pred := storage.Everything
	pred.AllowWatchBookmarks = true
	w, err := s.Watch(ctx, "/widgets", storage.ListOptions{Recursive: true, ResourceVersion: rvAt(rvOf(t, c)), ProgressNotify: true, Predicate: pred})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	// A write elsewhere moves etcd's revision without an event for us.
	other := newTestStore(t, func(cfg *Config) { cfg.ResourcePrefix = "/others" })
	o := mustCreate(t, other, "/others/x", testWidget("x", nil))
	want := rvOf(t, o)
	// Progress requests may be answered before the watch is registered, so
	// keep asking until a bookmark at the new revision arrives.
	deadline := time.After(10 * time.Second)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		if err := s.RequestWatchProgress(ctx); err != nil {
			t.Fatal(err)
		}
		select {
		case ev := <-w.ResultChan():
			if ev.Type != watch.Bookmark {
				t.Fatalf("unexpected %s event", ev.Type)
			}
			obj := ev.Object.(*widget.Widget)
			if rv := rvOf(t, obj); rv >= want {
				if obj.Name != "" || len(obj.Annotations) != 0 {
					t.Fatalf("bookmark carries more than an RV: %+v", obj.ObjectMeta)
				}
				return
			}
		case <-tick.C:
		case <-deadline:
			t.Fatal("no progress bookmark")
		}
	}
}
