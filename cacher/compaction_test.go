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
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
)

// A compaction made by someone else (here a bare etcd client, as etcdctl
// would, without the compactors' coordination key) is seen by the cacher
// at once: watches, exact lists and continue tokens below it answer 410
// although the cache still holds that history, and CompactRevision reports
// it. RVs at or after it are still served.
func TestExternalCompaction(t *testing.T) {
	c := startCacher(t, newStore(t, embedtest.Prefix(t), false), func(cfg *cacher.Config) {
		cfg.HistoryMinCapacity, cfg.HistoryMaxCapacity = 8, 8
	})
	ctx := testCtx(t)
	first := create(t, c, "ns", "a", nil)
	create(t, c, "ns", "b", nil)
	page := &widget.WidgetList{} // a first page, at b's revision
	if err := c.GetList(ctx, "/widgets", storage.ListOptions{Recursive: true,
		Predicate: storage.SelectionPredicate{Limit: 1}}, page); err != nil || page.Continue == "" {
		t.Fatalf("first page: continue %q, err %v", page.Continue, err)
	}
	var inWindow, last uint64
	for i := range 20 {
		last = bump(t, c, "ns", "a")
		if i == 15 {
			inWindow = last // still in the cache's 8-event history at the end
		}
	}
	// The cache has the newest revision: it would serve all of the below.
	if err := c.Get(ctx, key("ns", "a"), storage.GetOptions{ResourceVersion: storage.RVAt(last)}, &widget.Widget{}); err != nil {
		t.Fatal(err)
	}
	if _, err := etcd.Client.Compact(ctx, int64(last)); err != nil {
		t.Fatal(err)
	}

	for name, rv := range map[string]uint64{"in the cache's window": inWindow, "before it": first} {
		w, err := c.Watch(ctx, "/widgets", storage.ListOptions{ResourceVersion: storage.RVAt(rv), Recursive: true})
		if err == nil {
			ev := next(t, w, 10*time.Second)
			w.Stop()
			st, ok := ev.Object.(*metav1.Status)
			if ev.Type != watch.Error || !ok || st.Code != 410 {
				t.Errorf("watch from %d (%s): first event %s %T, want a 410 error event", rv, name, ev.Type, ev.Object)
			}
		} else if !errors.Is(err, storage.ErrGone) {
			t.Errorf("watch from %d (%s): %v, want 410", rv, name, err)
		}
		err = c.GetList(ctx, "/widgets", storage.ListOptions{Recursive: true, ResourceVersion: storage.RVAt(rv),
			ResourceVersionMatch: metav1.ResourceVersionMatchExact}, &widget.WidgetList{})
		if !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
			t.Errorf("exact list at %d (%s): %v, want 410", rv, name, err)
		}
	}
	err := c.GetList(ctx, "/widgets", storage.ListOptions{Recursive: true,
		Predicate: storage.SelectionPredicate{Limit: 1, Continue: page.Continue}}, &widget.WidgetList{})
	if !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
		t.Errorf("continue token from before the compaction: %v, want 410", err)
	}
	if got := c.CompactRevision(); got != int64(last) {
		t.Errorf("CompactRevision() = %d, want %d", got, last)
	}

	// From the compacted revision on, everything is served.
	w, err := c.Watch(ctx, "/widgets", storage.ListOptions{ResourceVersion: storage.RVAt(last), Recursive: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	rv := create(t, c, "ns", "c", nil)
	if ev := next(t, w, 10*time.Second); ev.Type != watch.Added || rvOf(t, ev.Object) != rv {
		t.Fatalf("watch from the compacted revision: %s, want ADDED at %d", ev.Type, rv)
	}
	if err := c.GetList(ctx, "/widgets", storage.ListOptions{Recursive: true, ResourceVersion: storage.RVAt(last),
		ResourceVersionMatch: metav1.ResourceVersionMatchExact}, &widget.WidgetList{}); err != nil {
		t.Fatalf("exact list at the compacted revision: %v", err)
	}
}
