package etcd3

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/storage"
)

// TestWatchProgressOnIdleStore: a watch from the current RV on a store
// that sees no writes at all still turns a requested progress notification
// into a BOOKMARK promptly (what a cache needs for consistent reads).
func TestWatchProgressOnIdleStore(t *testing.T) {
	for _, tc := range []struct {
		name string
		back int64 // start this many revisions before the current one
	}{{"from current", 0}, {"from the revision before", 1}} {
		t.Run(tc.name, func(t *testing.T) {
			s := newTestStore(t)
			ctx := testCtx(t)
			mustCreate(t, s, "/widgets/ns/a", widget("a", nil))
			cur := currentRev(t)
			pred := storage.Everything
			pred.AllowWatchBookmarks = true
			w, err := s.Watch(ctx, "/widgets", storage.ListOptions{Recursive: true, ResourceVersion: itoa(cur - tc.back),
				ProgressNotify: true, Predicate: pred})
			if err != nil {
				t.Fatal(err)
			}
			defer w.Stop()
			start := time.Now()
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			deadline := time.After(2 * time.Second)
			for {
				if err := s.RequestWatchProgress(ctx); err != nil {
					t.Fatal(err)
				}
				select {
				case ev := <-w.ResultChan():
					if ev.Type == watch.Bookmark && int64(rvOf(t, ev.Object)) >= cur {
						t.Logf("bookmark at %d after %v", rvOf(t, ev.Object), time.Since(start))
						return
					}
					if ev.Type != watch.Added {
						t.Fatalf("unexpected %s", ev.Type)
					}
				case <-tick.C:
				case <-deadline:
					t.Fatalf("no bookmark at >= %d within 2s on an idle store", cur)
				}
			}
		})
	}
}

// TestWatchFromJustBeforeCompaction: a watch from compactRev-1 asks for
// events from compactRev on, which etcd still has; the store's early start
// (one revision before) must not turn that into a 410.
func TestWatchFromJustBeforeCompaction(t *testing.T) {
	s := newTestStore(t)
	ctx := testCtx(t)
	a := mustCreate(t, s, "/widgets/ns/a", widget("a", nil))
	b := mustCreate(t, s, "/widgets/ns/b", widget("b", nil))
	if rvOf(t, b) != rvOf(t, a)+1 {
		t.Skipf("revisions %d, %d not consecutive", rvOf(t, a), rvOf(t, b))
	}
	if err := etcdServer.Compact(ctx, int64(rvOf(t, b))); err != nil {
		t.Fatal(err)
	}
	w, err := s.Watch(ctx, "/widgets", storage.ListOptions{Recursive: true, ResourceVersion: itoa(rvOf(t, a)), Predicate: storage.Everything})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	expectEvent(t, w, watch.Added, "b", rvOf(t, b))
}
