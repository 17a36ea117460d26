package etcd3

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
)

// nextEvent waits for the next event or fails the test.
func nextEvent(t testing.TB, w watch.Interface) watch.Event {
	t.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		if !ok {
			t.Fatal("watch channel closed")
		}
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("timed out waiting for a watch event")
	}
	return watch.Event{}
}

// expectEvent checks the type, name and RV (0: any) of the next event.
func expectEvent(t testing.TB, w watch.Interface, typ watch.EventType, name string, rv uint64) watch.Event {
	t.Helper()
	ev := nextEvent(t, w)
	if ev.Type != typ {
		t.Fatalf("event %s %v, want %s %s", ev.Type, ev.Object, typ, name)
	}
	if typ == watch.Error || typ == watch.Bookmark {
		return ev
	}
	wd := ev.Object.(*widget.Widget)
	if wd.Name != name || (rv != 0 && rvOf(t, wd) != rv) {
		t.Fatalf("%s event for %s@%s, want %s@%d", typ, wd.Name, wd.ResourceVersion, name, rv)
	}
	return ev
}

// expectClosed waits for the result channel to close.
func expectClosed(t testing.TB, w watch.Interface) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return
			}
			t.Fatalf("unexpected event %s %v", ev.Type, ev.Object)
		case <-deadline:
			t.Fatal("watch channel not closed")
		}
	}
}

func updateTo(t testing.TB, s *Store, key string, f func(*widget.Widget)) *widget.Widget {
	t.Helper()
	out := &widget.Widget{}
	err := s.GuaranteedUpdate(testCtx(t), key, out, false, nil, func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
		w := in.(*widget.Widget)
		f(w)
		return w, nil, nil
	}, nil, storage.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestWatchFromNowAndTransitions(t *testing.T) {
	s := newTestStore(t)
	ctx := testCtx(t)
	mustCreate(t, s, "/widgets/ns/old", testWidget("old", map[string]string{"app": "a"}))
	pred := storage.SelectionPredicate{Label: labels.SelectorFromSet(labels.Set{"app": "a"})}
	// RV "" without SendInitialEvents: the current state first.
	w, err := s.Watch(ctx, "/widgets", storage.ListOptions{Recursive: true, Predicate: pred})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	expectEvent(t, w, watch.Added, "old", 0)
	c := mustCreate(t, s, "/widgets/ns/x", testWidget("x", map[string]string{"app": "a"}))
	expectEvent(t, w, watch.Added, "x", rvOf(t, c))
	m := updateTo(t, s, "/widgets/ns/x", func(w *widget.Widget) { w.Spec.Replicas = 1 })
	expectEvent(t, w, watch.Modified, "x", rvOf(t, m))
	// Leaving the selection: DELETED with the previous object at the new RV.
	out := updateTo(t, s, "/widgets/ns/x", func(w *widget.Widget) { w.Labels["app"] = "b" })
	ev := expectEvent(t, w, watch.Deleted, "x", rvOf(t, out))
	if ev.Object.(*widget.Widget).Labels["app"] != "a" {
		t.Fatal("DELETED on leaving the selection should carry the previous object")
	}
	// Entering it again: ADDED.
	in := updateTo(t, s, "/widgets/ns/x", func(w *widget.Widget) { w.Labels["app"] = "a" })
	expectEvent(t, w, watch.Added, "x", rvOf(t, in))
	del := &widget.Widget{}
	if err := s.Delete(ctx, "/widgets/ns/x", del, nil, nil, nil, storage.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	expectEvent(t, w, watch.Deleted, "x", rvOf(t, del))
	w.Stop()
	expectClosed(t, w)
}

func TestWatchInitialEvents(t *testing.T) {
	s := newTestStore(t)
	ctx := testCtx(t)
	a := mustCreate(t, s, "/widgets/ns/a", testWidget("a", nil))
	b := mustCreate(t, s, "/widgets/ns/b", testWidget("b", nil))
	t.Run("RV0", func(t *testing.T) {
		w, err := s.Watch(ctx, "/widgets", storage.ListOptions{Recursive: true, ResourceVersion: storage.RVAny, Predicate: storage.Everything})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		expectEvent(t, w, watch.Added, "a", rvOf(t, a))
		expectEvent(t, w, watch.Added, "b", rvOf(t, b))
		c := mustCreate(t, s, "/widgets/ns/c", testWidget("c", nil))
		expectEvent(t, w, watch.Added, "c", rvOf(t, c))
	})
	t.Run("SendInitialEventsNotOlderThanN", func(t *testing.T) {
		yes := true
		pred := storage.Everything
		pred.AllowWatchBookmarks = true
		w, err := s.Watch(ctx, "/widgets", storage.ListOptions{Recursive: true, ResourceVersion: rvAt(rvOf(t, a)),
			ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, SendInitialEvents: &yes, Predicate: pred})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		// The current state (a, b and c from the previous subtest), not the
		// state at N followed by history.
		expectEvent(t, w, watch.Added, "a", rvOf(t, a))
		expectEvent(t, w, watch.Added, "b", rvOf(t, b))
		c := expectEvent(t, w, watch.Added, "c", 0)
		bm := expectEvent(t, w, watch.Bookmark, "", 0)
		bw := bm.Object.(*widget.Widget)
		if bw.Annotations[storage.InitialEventsAnnotationKey] != "true" || rvOf(t, bw) < rvOf(t, c.Object) {
			t.Fatalf("bookmark %+v", bw.ObjectMeta)
		}
		d := mustCreate(t, s, "/widgets/ns/d", testWidget("d", nil))
		expectEvent(t, w, watch.Added, "d", rvOf(t, d))
	})
}
