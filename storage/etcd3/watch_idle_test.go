package etcd3

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/examples/widget"
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
			mustCreate(t, s, "/widgets/ns/a", testWidget("a", nil))
			cur := currentRev(t)
			pred := storage.Everything
			pred.AllowWatchBookmarks = true
			w, err := s.Watch(ctx, "/widgets", storage.ListOptions{Recursive: true, ResourceVersion: rvAt(cur - tc.back),
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

// TestWatchFromJustBeforeCompactionIsGone: etcd compacted at C keeps the
// state at C, not at C-1, so a watch from C-1 gets 410 like an Exact list at
// C-1 does (its events at C may have lost their previous values), and a
// watch from C is served.
func TestWatchFromJustBeforeCompactionIsGone(t *testing.T) {
	s := newTestStore(t)
	ctx := testCtx(t)
	mustCreate(t, s, "/widgets/ns/a", testWidget("a", nil))
	b := mustCreate(t, s, "/widgets/ns/b", testWidget("b", nil))
	if err := etcdServer.Compact(ctx, int64(rvOf(t, b))); err != nil {
		t.Fatal(err)
	}
	w, err := s.Watch(ctx, "/widgets", storage.ListOptions{Recursive: true, ResourceVersion: rvAt(rvOf(t, b) - 1), Predicate: storage.Everything})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	ev := expectEvent(t, w, watch.Error, "", 0)
	if st, ok := ev.Object.(*metav1.Status); !ok || st.Code != 410 {
		t.Fatalf("watch from C-1: error event %#v, want 410", ev.Object)
	}
	expectClosed(t, w)
	w2, err := s.Watch(ctx, "/widgets", storage.ListOptions{Recursive: true, ResourceVersion: rvAt(rvOf(t, b)), Predicate: storage.Everything})
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Stop()
	if err := s.Delete(ctx, "/widgets/ns/a", &widget.Widget{}, nil, nil, nil, storage.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	expectEvent(t, w2, watch.Deleted, "a", 0)
}
