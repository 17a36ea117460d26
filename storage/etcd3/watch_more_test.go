package etcd3

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
)

// TestWatchBookmarksNeverOvertakeHistory opens watches that must catch up
// from history while progress is requested continuously: no bookmark may
// arrive before the events it covers (etcd may hand a new watch a progress
// answer computed before the watch was registered).
func TestWatchBookmarksNeverOvertakeHistory(t *testing.T) {
	s := newTestStore(t)
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	first := mustCreate(t, s, "/widgets/ns/w", testWidget("w", nil))
	for i := 0; i < 20; i++ {
		updateTo(t, s, "/widgets/ns/w", func(w *widget.Widget) { w.Spec.Replicas++ })
	}
	last := currentRev(t)
	// A synced watch on the same gRPC stream, so that etcd answers
	// progress requests while the watches below are being created.
	no := false
	anchor, err := s.Watch(ctx, "/widgets/anchor", storage.ListOptions{SendInitialEvents: &no, Predicate: storage.Everything})
	if err != nil {
		t.Fatal(err)
	}
	defer anchor.Stop()
	mustCreate(t, s, "/widgets/anchor", testWidget("anchor", nil))
	var wg sync.WaitGroup
	wg.Go(func() {
		for ctx.Err() == nil {
			_ = s.RequestWatchProgress(ctx)
			time.Sleep(100 * time.Microsecond)
		}
	})
	// Traffic on the stream widens the window in which etcd holds a
	// progress answer while a new watch is being created.
	wg.Go(func() {
		for ctx.Err() == nil {
			_ = s.GuaranteedUpdate(ctx, "/widgets/anchor", &widget.Widget{}, false, nil, bumpReplicas, nil, storage.UpdateOptions{})
		}
	})
	wg.Go(func() {
		for {
			select {
			case <-anchor.ResultChan():
			case <-ctx.Done():
				return
			}
		}
	})
	defer func() { cancel(); wg.Wait() }()
	pred := storage.Everything
	pred.AllowWatchBookmarks = true
	errs := make(chan error, 16)
	var watchers sync.WaitGroup
	for n := 0; n < 16; n++ {
		watchers.Go(func() { errs <- checkBookmarkOrder(ctx, s, pred, int64(rvOf(t, first)), last) })
	}
	watchers.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
}

// checkBookmarkOrder watches from start and reports a bookmark that
// arrives before every event up to its RV (and up to last) was delivered.
func checkBookmarkOrder(ctx context.Context, s *Store, pred storage.SelectionPredicate, start, last int64) error {
	w, err := s.Watch(ctx, "/widgets/ns", storage.ListOptions{Recursive: true, ResourceVersion: rvAt(start),
		ProgressNotify: true, Predicate: pred})
	if err != nil {
		return err
	}
	defer w.Stop()
	var seen int64
	timeout := time.After(10 * time.Second)
	for seen < last {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return fmt.Errorf("watch closed after %d", seen)
			}
			rv, err := storage.APIObjectVersioner{}.ObjectResourceVersion(ev.Object)
			if err != nil {
				return err
			}
			if ev.Type == watch.Bookmark {
				if int64(rv) > seen {
					return fmt.Errorf("bookmark at %d before the events after %d (up to %d) were delivered", rv, seen, last)
				}
				continue
			}
			seen = int64(rv)
		case <-timeout:
			return fmt.Errorf("timed out after event %d", seen)
		}
	}
	return nil
}

func TestWatchSendInitialEventsEdgeCases(t *testing.T) {
	s := newTestStore(t)
	ctx := testCtx(t)
	a := mustCreate(t, s, "/widgets/ns/a", testWidget("a", nil))
	yes, no := true, false
	pred := storage.Everything
	pred.AllowWatchBookmarks = true

	t.Run("RV empty: state now, then annotated bookmark", func(t *testing.T) {
		w, err := s.Watch(ctx, "/widgets", storage.ListOptions{Recursive: true, SendInitialEvents: &yes, Predicate: pred})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		expectEvent(t, w, watch.Added, "a", rvOf(t, a))
		bm := expectEvent(t, w, watch.Bookmark, "", 0).Object.(*widget.Widget)
		if bm.Annotations[storage.InitialEventsAnnotationKey] != "true" || rvOf(t, bm) < rvOf(t, a) {
			t.Fatalf("bookmark %+v", bm.ObjectMeta)
		}
	})
	t.Run("future RV is too large", func(t *testing.T) {
		w, err := s.Watch(ctx, "/widgets", storage.ListOptions{Recursive: true, SendInitialEvents: &yes,
			ResourceVersion: rvAt(currentRev(t) + 1000), Predicate: pred})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		st := expectEvent(t, w, watch.Error, "", 0).Object.(*metav1.Status)
		if st.Code != 504 || st.Details == nil || len(st.Details.Causes) == 0 ||
			st.Details.Causes[0].Type != metav1.CauseTypeResourceVersionTooLarge {
			t.Fatalf("status %+v", st)
		}
		expectClosed(t, w)
	})
	t.Run("SendInitialEvents=false with RV 0 starts now", func(t *testing.T) {
		w, err := s.Watch(ctx, "/widgets", storage.ListOptions{Recursive: true, ResourceVersion: storage.RVAny, SendInitialEvents: &no, Predicate: pred})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		b := mustCreate(t, s, "/widgets/ns/b", testWidget("b", nil))
		expectEvent(t, w, watch.Added, "b", rvOf(t, b))
	})
}

func TestWatchSingleKeyAndUnstructured(t *testing.T) {
	s := newTestStore(t, unstructuredConfig)
	ctx := testCtx(t)
	w, err := s.Watch(ctx, "/widgets/ns/a", storage.ListOptions{Predicate: storage.Everything})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	// A key sharing the prefix is not watched.
	if err := s.Create(ctx, "/widgets/ns/ab", widget.NewUnstructuredWidget("ns", "ab", nil), nil, 0); err != nil {
		t.Fatal(err)
	}
	out := &unstructured.Unstructured{}
	if err := s.Create(ctx, "/widgets/ns/a", widget.NewUnstructuredWidget("ns", "a", nil), out, 0); err != nil {
		t.Fatal(err)
	}
	ev := nextEvent(t, w)
	u, ok := ev.Object.(*unstructured.Unstructured)
	if ev.Type != watch.Added || !ok || u.GetName() != "a" || u.GetResourceVersion() != out.GetResourceVersion() {
		t.Fatalf("event %s %#v", ev.Type, ev.Object)
	}
}

func TestStatsAndCurrentRV(t *testing.T) {
	s := newTestStore(t)
	ctx := testCtx(t)
	for i := 0; i < 3; i++ {
		mustCreate(t, s, fmt.Sprintf("/widgets/ns/w%d", i), testWidget(fmt.Sprintf("w%d", i), nil))
	}
	// Keys of another resource under the same etcd prefix are not counted.
	other := newTestStore(t, func(c *Config) { c.ResourcePrefix = "/widgetsX" })
	mustCreate(t, other, "/widgetsX/ns/o", testWidget("o", nil))
	st, err := s.Stats(ctx)
	if err != nil || st.ObjectCount != 3 {
		t.Fatalf("stats %+v %v, want 3", st, err)
	}
	rv, err := s.GetCurrentResourceVersion(ctx)
	if err != nil || int64(rv) != currentRev(t) {
		t.Fatalf("current RV %d (%v), etcd at %d", rv, err, currentRev(t))
	}
}

func bumpReplicas(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
	w := in.(*widget.Widget)
	w.Spec.Replicas++
	return w, nil, nil
}
