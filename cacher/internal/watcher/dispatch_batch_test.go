package watcher

import (
	"context"
	"fmt"
	"testing"
	"time"

	clocktesting "k8s.io/utils/clock/testing"

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

// addIdleWatcher registers a started watcher of every widget (with
// bookmarks if asked, encoded if asked) in live dispatch with no
// goroutine: the hub delivers to it under its lock, so what its client has
// is known at every step.
func (f *batchFixture) addIdleWatcher(bookmarks, encoded bool) *Watcher {
	f.t.Helper()
	opts := storage.ListOptions{Recursive: true, Predicate: storage.SelectionPredicate{AllowWatchBookmarks: bookmarks}}
	opts.Predicate.GetAttrs = widget.GetAttrs
	w := f.c.env.New("/widgets", opts)
	w.Encoded = encoded
	ctx, cancel := context.WithCancelCause(context.Background())
	f.t.Cleanup(func() { cancel(nil) })
	w.ctx, w.abort, w.release = ctx, cancel, func() {}
	f.c.hub.Add(w.e)
	return w
}

// While the feed batches (more storage events wait), dispatch defers
// waking the watchers to the end of the batch, and they then take the
// batch's events together, in order; at most hub.MaxHeldEvents are
// published before the watchers are woken.
func TestDispatchBatchHoldsUntilTheBatchEnds(t *testing.T) {
	f := newBatchFixture(t)
	w := f.addIdleWatcher(false, false)
	f.c.hub.Batch(true)
	first := f.apply()
	second := f.apply()
	if n := len(w.result); n != 0 {
		t.Fatalf("client has %d events during the batch, want 0 (not woken yet)", n)
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
	if _, direct := f.c.hub.State(w.e); !direct {
		t.Fatal("a goroutine was started for events its result had room for")
	}
}

// A bookmark published during a batch comes after the batch's events: it
// must not overtake them.
func TestDispatchBatchBookmarkAfterTheEvents(t *testing.T) {
	f := newBatchFixture(t)
	w := f.addIdleWatcher(true, false)
	f.c.hub.Batch(true)
	f.c.cache.UpdateRV(f.apply().RV) // its revision is complete: the bookmark's RV
	w.e.SetDeadlineBookmark(time.Now())
	f.c.hub.QueueBookmark(w.e)
	f.c.hub.Batch(false)
	got := drainEvents(t, w)
	if len(got) != 2 || got[0].Type != watch.Added || got[1].Type != watch.Bookmark {
		t.Fatalf("client got %v, want the ADDED, then the BOOKMARK", eventTypes(got))
	}
}

// A watcher whose client does not read leaves live dispatch when one more
// change than its buffer waits for it in the log, at the RV before that
// change, with every earlier change left in the log for it.
func TestDispatchBatchLagsAtTheEventThatDoesNotFit(t *testing.T) {
	f := newBatchFixture(t)
	f.c.env.BufferSize = 2
	w := f.c.addTestWatcher("/widgets", true, storage.Everything) // no goroutine takes anything
	var evs []*watchcache.Event
	for range cap(w.result) {
		evs = append(evs, f.apply()) // fill the client's channel
	}
	f.c.hub.Batch(true)
	for range 4 {
		evs = append(evs, f.apply())
	}
	f.c.hub.Batch(false)
	if live, _ := f.c.hub.State(w.e); live {
		t.Fatal("the watcher is still in live dispatch with its buffer full")
	}
	// The channel took the first cap(result), the log holds the next two
	// for it.
	lagAt := evs[cap(w.result)+2].RV - 1
	if w.e.LagFrom() != lagAt {
		t.Fatalf("lagged from %d, want %d", w.e.LagFrom(), lagAt)
	}
	q, lost := w.e.Take(nil)
	if lost || len(q) != 2 || q[0].Event != evs[cap(w.result)] || q[1].Event != evs[cap(w.result)+1] {
		t.Fatalf("took %d events (lost %v), want the 2 after the channel's", len(q), lost)
	}
}

// Encoded watchers (WatchEncoded) share one wrapper of a change's object,
// also when a batch wakes them for several.
func TestDispatchSharesEncodedWrappers(t *testing.T) {
	f := newBatchFixture(t)
	var ws []*Watcher
	for range 3 {
		ws = append(ws, f.addIdleWatcher(false, true))
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
}

// A watcher whose client fell behind is handed to a goroutine for what is
// published before it takes it, and one Take hands it all, in order; the
// next finds nothing. A watcher the changes do not concern is left to the
// hub.
func TestWatcherTakesTheLogInOneGo(t *testing.T) {
	f := newBatchFixture(t)
	w := f.c.addTestWatcher("/widgets", true, storage.Everything) // no goroutine takes anything
	other := f.c.addTestWatcher("/widgets/ns/none", false, storage.Everything)
	for range cap(w.result) {
		f.apply() // fill the client's channel: the hub hands delivery to the goroutine
	}
	var want []*watchcache.Event
	for range 5 {
		want = append(want, f.apply())
	}
	if _, direct := f.c.hub.State(w.e); direct {
		t.Fatal("a watcher whose client fell behind was not handed to a goroutine")
	}
	if _, direct := f.c.hub.State(other.e); !direct {
		t.Fatal("a watcher the events do not concern was handed to a goroutine")
	}
	got, lost := w.e.Take(nil)
	if lost || len(got) != len(want) {
		t.Fatalf("took %d entries (lost %v), want %d", len(got), lost, len(want))
	}
	for i, p := range got {
		if p.Event != want[i] {
			t.Fatalf("entry %d is RV %d, want %d", i, p.Event.RV, want[i].RV)
		}
	}
	if again, _ := w.e.Take(nil); len(again) != 0 {
		t.Fatalf("a second Take found %d entries, want none", len(again))
	}
}

// Within the coalescing interval of the last round of wake-ups, commits
// defer waking the watchers to the interval's end, when their client gets
// the interval's changes together, in order; a commit after a quiet
// interval wakes them at once.
func TestDispatchCoalescesWakeUps(t *testing.T) {
	const window = 2 * time.Millisecond
	wall := clocktesting.NewFakeClock(time.Now())
	f := newBatchFixture(t)
	f.c.hub = hub.New(hub.Config{Wall: wall, Metrics: noMetrics{}, Coalesce: window})
	f.c.env.Hub = f.c.hub
	w := f.addIdleWatcher(false, false)
	first := f.apply()
	if got := drainRVs(t, w); fmt.Sprint(got) != fmt.Sprint([]uint64{first.RV}) {
		t.Fatalf("after a quiet interval the client got %v, want %d at once", got, first.RV)
	}
	second, third := f.apply(), f.apply()
	if n := len(w.result); n != 0 {
		t.Fatalf("client has %d events within the interval, want 0 (not woken yet)", n)
	}
	wall.Step(window)
	var got []uint64
	for deadline := time.Now().Add(5 * time.Second); len(got) < 2 && time.Now().Before(deadline); {
		got = append(got, drainRVs(t, w)...)
		time.Sleep(time.Millisecond) // the interval's timer runs on a goroutine of its own
	}
	if want := []uint64{second.RV, third.RV}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("at the interval's end the client got %v, want %v", got, want)
	}
	wall.Step(window)
	fourth := f.apply()
	if got := drainRVs(t, w); fmt.Sprint(got) != fmt.Sprint([]uint64{fourth.RV}) {
		t.Fatalf("after a quiet interval the client got %v, want %d at once", got, fourth.RV)
	}
}
