package watcher

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/listwatch/listwatch/cacher/internal/history"
	"github.com/listwatch/listwatch/cacher/internal/hub"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/watchcache"
)

// memHistory is a Source over an in-memory cache, with no storage
// behind it: the watcher state machine's tests need no etcd.
type memHistory struct{ cache *watchcache.Cache }

func (m memHistory) EventsSince(pos uint64, limit int) ([]*watchcache.Event, uint64, error) {
	return m.cache.EventsSince(pos, limit)
}
func (m memHistory) CacheRV() uint64           { rv, _ := m.cache.RV(); return rv }
func (m memHistory) CacheHolds(rv uint64) bool { return m.cache.Oldest() <= rv }
func (m memHistory) Read(context.Context, history.Want) (*history.Shared, error) {
	return nil, errors.New("memHistory: no storage")
}
func (m memHistory) Release(*history.Shared)                   {}
func (m memHistory) StorageRV(context.Context) (uint64, error) { return m.CacheRV(), nil }
func (m memHistory) ReleaseSlot(bool)                          {}

// machineRig is one watcher on a hub fed from a memHistory, with a fake
// wall clock (deadline bookmarks).
type machineRig struct {
	t     *testing.T
	cache *watchcache.Cache
	hub   *hub.Hub
	wall  *clocktesting.FakeClock
	w     *Watcher
	rv    uint64 // the newest RV published
	next  uint64 // the RV of the next event the client expects
	ended chan struct{}
}

func newMachineRig(t *testing.T) *machineRig {
	cache := newWidgetCache(t)
	r := &machineRig{t: t, cache: cache, rv: 1, next: 2, wall: clocktesting.NewFakeClock(time.Now()),
		ended: make(chan struct{})}
	r.hub = hub.New(hub.Config{Wall: r.wall, Metrics: noMetrics{}, CacheRV: cache.RV})
	env := &Env{Source: memHistory{cache}, Hub: r.hub, Wall: r.wall, Metrics: noMetrics{},
		Versioner: storage.APIObjectVersioner{}, NewFunc: widget.New, KeyFunc: widgetKey,
		CatchUpBatch: 4, BufferSize: 2}
	r.w = env.New("/widgets", storage.ListOptions{Recursive: true,
		Predicate: storage.SelectionPredicate{AllowWatchBookmarks: true, GetAttrs: widget.GetAttrs}})
	r.w.SetDeadlineBookmark(r.wall.Now().Add(time.Minute))
	r.w.Plan = Plan{Pos: 1}

	// What the cacher's startWatcher does, without a cacher.
	ctx, cancel := context.WithCancelCause(context.Background())
	stopWake := context.AfterFunc(ctx, r.w.Wake)
	r.w.Start(ctx, cancel, func() {
		stopWake()
		cancel(nil)
		close(r.ended)
	})
	t.Cleanup(r.stop)
	return r
}

// stop ends the watch and waits until it has released what it held.
func (r *machineRig) stop() {
	r.w.Stop()
	<-r.ended
}

// publish applies n new objects to the cache and dispatches them, one
// revision each, as the feed does.
func (r *machineRig) publish(n int) {
	for range n {
		r.rv++
		o := widget.NewWidget("ns", fmt.Sprintf("w%d", r.rv))
		o.ResourceVersion = fmt.Sprint(r.rv)
		err := r.hub.Commit(func(tx hub.Tx) error {
			ev, err := r.cache.Apply(watch.Added, o, r.rv)
			if err != nil || ev == nil {
				return err
			}
			r.cache.UpdateRV(r.rv) // each revision is one event: complete
			tx.Dispatch(ev)
			return nil
		})
		if err != nil {
			r.t.Fatal(err)
		}
	}
}

// receive reads the next event, failing after a second.
func (r *machineRig) receive() watch.Event {
	r.t.Helper()
	select {
	case ev, ok := <-r.w.ResultChan():
		if !ok {
			r.t.Fatal("result closed")
		}
		return ev
	case <-time.After(time.Second):
		r.t.Fatalf("no event (expecting RV %d)", r.next)
	}
	return watch.Event{}
}

// receiveAll reads the events up to the newest published, each exactly
// once and in order.
func (r *machineRig) receiveAll() {
	r.t.Helper()
	for r.next <= r.rv {
		ev := r.receive()
		if got := rvOfObject(r.t, ev); ev.Type != watch.Added || got != r.next {
			r.t.Fatalf("got %s at RV %d, want ADDED at RV %d", ev.Type, got, r.next)
		}
		r.next++
	}
}

func rvOfObject(t *testing.T, ev watch.Event) uint64 {
	rv, err := storage.APIObjectVersioner{}.ObjectResourceVersion(ev.Object)
	if err != nil {
		t.Fatal(err)
	}
	return rv
}

// state reports whether the watcher is in live dispatch, and whether the
// hub delivers for it (it has no goroutine).
func (r *machineRig) state() (live, direct bool) { return r.hub.State(r.w.e) }

// await waits, at most a second, until the watcher's state is as wanted.
func (r *machineRig) await(what string, wantLive, wantDirect bool) {
	r.t.Helper()
	deadline := time.Now().Add(time.Second)
	for {
		if live, direct := r.state(); live == wantLive && direct == wantDirect {
			return
		}
		if time.Now().After(deadline) {
			live, direct := r.state()
			r.t.Fatalf("%s: live=%v direct=%v, want live=%v direct=%v", what, live, direct, wantLive, wantDirect)
		}
		time.Sleep(time.Millisecond) // polling a state no channel announces
	}
}

// TestWatcherStateMachine drives one watcher, on a hub fed from an
// in-memory history with a fake wall clock and no etcd, through live
// dispatch with and without a goroutine, lag, catch-up from history,
// rejoining, its deadline bookmark and the end of its context, checking at
// each step where it is and that its client gets every event exactly
// once, in order.
func TestWatcherStateMachine(t *testing.T) {
	start := time.Now()
	r := newMachineRig(t)
	steps := []struct {
		name string
		do   func(t *testing.T, r *machineRig)
	}{
		{"joins live dispatch from its start RV and gives up its goroutine", func(t *testing.T, r *machineRig) {
			r.await("joined", true, true)
		}},
		{"events its result has room for are delivered with no goroutine", func(t *testing.T, r *machineRig) {
			r.publish(3)
			if _, direct := r.state(); !direct {
				t.Fatal("a goroutine was started for events its result had room for")
			}
			r.receiveAll()
		}},
		{"a client that does not read makes it lag out of live dispatch", func(t *testing.T, r *machineRig) {
			// result (16) + what may wait in the log (2) < 30
			r.publish(30)
			if live, _ := r.state(); live {
				t.Fatal("still in live dispatch after 30 unread events")
			}
		}},
		{"it catches up from history, rejoins and gives up its goroutine", func(t *testing.T, r *machineRig) {
			r.receiveAll()
			r.await("rejoined", true, true)
			r.publish(2)
			r.receiveAll()
		}},
		{"an event its result has no room for starts a goroutine, which gives delivery back once it is sent", func(t *testing.T, r *machineRig) {
			r.publish(17) // 16 fill result, one waits for the goroutine
			if live, direct := r.state(); !live || direct {
				t.Fatalf("live=%v direct=%v with a full result, want live and a goroutine", live, direct)
			}
			r.receiveAll()
			r.await("handed back", true, true)
		}},
		{"its deadline bookmark is published when due", func(t *testing.T, r *machineRig) {
			r.wall.Step(time.Minute)
			select {
			case ev := <-r.w.ResultChan():
				if ev.Type != watch.Bookmark || rvOfObject(t, ev) != r.rv {
					t.Fatalf("got %s at RV %d, want the deadline BOOKMARK at RV %d", ev.Type, rvOfObject(t, ev), r.rv)
				}
			case <-time.After(time.Second):
				t.Fatal("no deadline bookmark")
			}
		}},
		{"with no goroutine, the end of its context ends the watch", func(t *testing.T, r *machineRig) {
			r.await("no goroutine", true, true)
			r.w.Abort(nil)
			select {
			case <-r.ended:
			case <-time.After(time.Second):
				t.Fatal("the watch did not end")
			}
			if _, ok := <-r.w.ResultChan(); ok {
				t.Fatal("an event after the end")
			}
			if live, _ := r.state(); live {
				t.Fatal("still in live dispatch after the end")
			}
		}},
	}
	for _, s := range steps {
		if !t.Run(s.name, func(t *testing.T) { r.t = t; s.do(t, r) }) {
			r.t = t
			return
		}
	}
	r.t = t
	if d := time.Since(start); d > time.Second {
		t.Errorf("took %v, want under a second", d)
	}
}
