package cacher_test

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
)

// slowWatchStore delays every object event of its watches by delay (a
// bookmark waits only behind the events before it), so that the cache lags
// the storage by that much.
type slowWatchStore struct {
	storage.Interface
	delay time.Duration
}

func (s *slowWatchStore) Watch(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	w, err := s.Interface.Watch(ctx, key, opts)
	if err != nil {
		return nil, err
	}
	out := make(chan watch.Event)
	done := make(chan struct{})
	go func() {
		defer close(out)
		for ev := range w.ResultChan() {
			if ev.Type != watch.Bookmark {
				select {
				case <-time.After(s.delay):
				case <-done:
					return
				}
			}
			select {
			case out <- ev:
			case <-done:
				return
			}
		}
	}()
	return &delayedWatch{inner: w, out: out, done: done}, nil
}

type delayedWatch struct {
	inner watch.Interface
	out   chan watch.Event
	done  chan struct{}
}

func (w *delayedWatch) Stop() {
	select {
	case <-w.done:
	default:
		close(w.done)
	}
	w.inner.Stop()
}

func (w *delayedWatch) ResultChan() <-chan watch.Event { return w.out }

// TestReadAtZeroSeesOwnWrites: a cache that lags the storage by 300 ms
// still answers reads at RV "0" (Get, List, a watch's initial events) with
// every write made through the same cacher before them.
func TestReadAtZeroSeesOwnWrites(t *testing.T) {
	raw := newStore(t, embedtest.Prefix(t), false)
	c := startCacher(t, &slowWatchStore{Interface: raw, delay: 300 * time.Millisecond})
	ctx := testCtx(t)

	rv := create(t, c, "ns", "a", nil)
	list := &widget.WidgetList{}
	if err := c.GetList(ctx, "/widgets", storage.ListOptions{Recursive: true, ResourceVersion: storage.RVAny, Predicate: storage.Everything}, list); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || rvOf(t, &list.Items[0]) != rv {
		t.Fatalf("list at RV 0 right after a create through the cacher: %d items, want a@%d", len(list.Items), rv)
	}

	rv = bump(t, c, "ns", "a")
	got := &widget.Widget{}
	if err := c.Get(ctx, key("ns", "a"), storage.GetOptions{ResourceVersion: storage.RVAny}, got); err != nil {
		t.Fatal(err)
	}
	if rvOf(t, got) != rv {
		t.Fatalf("get at RV 0 right after an update through the cacher: a@%d, want a@%d", rvOf(t, got), rv)
	}

	rv = create(t, c, "ns", "b", nil)
	w := watchAll(t, c, storage.RVAny)
	seen := map[string]uint64{}
	for len(seen) < 2 {
		ev := next(t, w, 10*time.Second)
		if ev.Type != watch.Added {
			t.Fatalf("initial event %s, want ADDED", ev.Type)
		}
		seen[ev.Object.(*widget.Widget).Name] = rvOf(t, ev.Object)
	}
	if seen["b"] != rv {
		t.Fatalf("watch at RV 0 right after a create through the cacher: initial state %v, want b@%d", seen, rv)
	}
}
