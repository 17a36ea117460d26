package watcher

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/cacher/internal/hub"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/watchcache"
)

// batchFixture is a cacher without storage whose feed is driven by hand:
// apply commits one update and dispatches it, as the feed does.
type batchFixture struct {
	t  *testing.T
	c  *dispatchRig
	rv uint64
}

func newBatchFixture(t *testing.T) *batchFixture {
	return &batchFixture{t: t, c: newDispatchRig(t), rv: 1}
}

func (f *batchFixture) apply() *watchcache.Event {
	f.t.Helper()
	f.rv++
	var ev *watchcache.Event
	o := widget.NewWidget("ns", fmt.Sprintf("w%d", f.rv))
	o.ResourceVersion = fmt.Sprint(f.rv)
	err := f.c.hub.Commit(func(tx hub.Tx) error {
		var err error
		ev, err = f.c.cache.Apply(watch.Added, o, f.rv)
		if err != nil {
			return err
		}
		tx.Dispatch(ev)
		return nil
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return ev
}

// drainEvents returns what w's client can read now.
func drainEvents(t *testing.T, w *Watcher) []watch.Event {
	t.Helper()
	var evs []watch.Event
	for {
		select {
		case ev := <-w.result:
			evs = append(evs, ev)
		default:
			return evs
		}
	}
}

// drainRVs returns the RVs of what w's client can read now.
func drainRVs(t *testing.T, w *Watcher) []uint64 {
	t.Helper()
	var rvs []uint64
	for _, ev := range drainEvents(t, w) {
		rv, err := storage.APIObjectVersioner{}.ObjectResourceVersion(ev.Object)
		if err != nil {
			t.Fatal(err)
		}
		rvs = append(rvs, rv)
	}
	return rvs
}

func eventTypes(evs []watch.Event) []watch.EventType {
	var ts []watch.EventType
	for _, ev := range evs {
		ts = append(ts, ev.Type)
	}
	return ts
}

// While the feed batches (more storage events wait), a commit's deliveries
// are held and handed over together, in order, when the batch ends; at
// most hub.MaxHeldEvents are held.
func TestDispatchBatchHoldsUntilTheBatchEnds(t *testing.T) {
	f := newBatchFixture(t)
	w := f.c.addTestWatcher("/widgets", true, storage.Everything)
	f.c.hub.Batch(true)
	first := f.apply()
	second := f.apply()
	if n := len(w.result); n != 0 {
		t.Fatalf("client has %d events during the batch, want 0 (held)", n)
	}
	f.c.hub.Batch(false)
	got := drainRVs(t, w)
	if want := []uint64{first.RV, second.RV}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("client got RVs %v after the batch, want %v", got, want)
	}

	f.c.hub.Batch(true)
	var want []uint64
	for range hub.MaxHeldEvents {
		want = append(want, f.apply().RV)
	}
	if got := drainRVs(t, w); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("after %d events in a batch the client got %v, want %v", hub.MaxHeldEvents, got, want)
	}
	f.c.hub.Batch(false)
}

// Anything else that reaches a watcher under the hub's lock comes after
// the held events: a bookmark at the cache's RV must not overtake them.
func TestDispatchBatchHandsOverBeforeBookmarks(t *testing.T) {
	f := newBatchFixture(t)
	opts := storage.ListOptions{Recursive: true, Predicate: storage.SelectionPredicate{AllowWatchBookmarks: true}}
	opts.Predicate.GetAttrs = widget.GetAttrs
	w := f.c.env.New("/widgets", opts)
	f.c.hub.Add(w.e)
	f.c.hub.Batch(true)
	ev := f.apply()
	f.c.hub.QueueBookmark(w.e, func() uint64 { return ev.RV })
	got := drainEvents(t, w)
	if len(got) != 2 || got[0].Type != watch.Added || got[1].Type != watch.Bookmark {
		t.Fatalf("client got %v, want the held ADDED, then the BOOKMARK", eventTypes(got))
	}
	f.c.hub.Batch(false)
}

// A watcher whose client does not read leaves live dispatch when a held
// event does not fit, at the RV before it, with every earlier event queued.
func TestDispatchBatchLagsAtTheEventThatDoesNotFit(t *testing.T) {
	f := newBatchFixture(t)
	f.c.env.BufferSize = 2
	w := f.c.addTestWatcher("/widgets", true, storage.Everything)
	var evs []*watchcache.Event
	for range cap(w.result) {
		evs = append(evs, f.apply()) // fill the client's channel
	}
	f.c.hub.Batch(true)
	for range 4 {
		evs = append(evs, f.apply())
	}
	f.c.hub.Batch(false)
	live, _, _ := f.c.hub.State(w.e)
	if live {
		t.Fatal("the watcher is still in live dispatch with its queue full")
	}
	// The channel took the first cap(result), the queue (2) the next two.
	lagAt := evs[cap(w.result)+2].RV - 1
	if w.e.LagFrom() != lagAt {
		t.Fatalf("lagged from %d, want %d", w.e.LagFrom(), lagAt)
	}
	if q := w.e.Take(nil); len(q) != 2 || q[0] != evs[cap(w.result)] || q[1] != evs[cap(w.result)+1] {
		t.Fatalf("queued %d events, want the 2 after the channel's", len(q))
	}
	if held, _ := f.c.hub.Held(w.e); held != 0 {
		t.Fatalf("%d events still held", held)
	}
}

// Encoded watchers (WatchEncoded) that dispatch delivers a change to share
// one wrapper of its object, also when a batch hands several over.
func TestDispatchSharesEncodedWrappers(t *testing.T) {
	f := newBatchFixture(t)
	var ws []*Watcher
	for range 3 {
		w := f.c.env.New("/widgets", storage.ListOptions{Recursive: true,
			Predicate: storage.SelectionPredicate{GetAttrs: widget.GetAttrs}})
		w.Encoded = true
		f.c.hub.Add(w.e)
		ws = append(ws, w)
	}
	f.apply()
	f.c.hub.Batch(true)
	f.apply()
	f.apply()
	f.c.hub.Batch(false)
	var got [][]watch.Event
	for _, w := range ws {
		got = append(got, drainEvents(t, w))
	}
	for i := range 3 {
		first, ok := got[0][i].Object.(*storage.EncodedObject)
		if !ok {
			t.Fatalf("event %d is a %T, want *storage.EncodedObject", i, got[0][i].Object)
		}
		for j := 1; j < len(ws); j++ {
			if got[j][i].Object != first {
				t.Fatalf("watchers 0 and %d got different wrappers of event %d", j, i)
			}
		}
		if i > 0 && got[0][i-1].Object == first {
			t.Fatalf("events %d and %d share a wrapper", i-1, i)
		}
	}
	if _, n := f.c.hub.Held(ws[0].e); n != 0 {
		t.Fatalf("%d wrappers kept after the round", n)
	}
}
