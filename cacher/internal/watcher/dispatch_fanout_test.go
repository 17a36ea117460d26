package watcher

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/cacher/internal/hub"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/watchcache"
)

// BenchmarkDispatchFanout measures fan-out rounds: Events updates, each
// committed and dispatched as the feed does, to 1,000 started watchers of
// every object, each read by a client goroutine, until every client has
// them all (ns/delivery is per watcher and event). It is the cacher's
// share of an unpaced fan-out: dispatch, the watchers' delivery, the
// channel sends and the wake-ups. Events=1 is a feed that finds no other
// event waiting; Events=8 one that finds a backlog, handed over event by
// event (Batch=false) or together (Batch=true, see hub.Batch); Events=64
// one whose backlog outruns the clients' channels (16), so that the
// watchers' goroutines deliver the rest.
func BenchmarkDispatchFanout(b *testing.B) {
	for _, events := range []int{1, 8, 64} {
		for _, batch := range []bool{false, true} {
			if events == 1 && batch {
				continue
			}
			b.Run(fmt.Sprintf("Events=%d/Batch=%v", events, batch), func(b *testing.B) {
				benchmarkDispatchFanout(b, events, batch)
			})
		}
	}
}

func benchmarkDispatchFanout(b *testing.B, events int, batch bool) {
	const watchers = 1000
	c := newDispatchRig(b)
	const objects = 100
	rv := uint64(1)
	apply := func() *watchcache.Event {
		rv++
		o := widget.NewWidget("ns", fmt.Sprintf("w%04d", rv%objects))
		ev, err := c.cache.Apply(watch.Modified, o, rv)
		if err != nil {
			b.Fatal(err)
		}
		c.cache.UpdateRV(rv)
		return ev
	}
	for range objects {
		apply()
	}
	var left atomic.Int64
	round := make(chan struct{}, 1)
	var wg sync.WaitGroup
	ws := make([]*Watcher, watchers)
	for i := range ws {
		w := c.env.New("/widgets", storage.ListOptions{Recursive: true,
			Predicate: storage.SelectionPredicate{GetAttrs: widget.GetAttrs}})
		w.Plan = Plan{Pos: rv}
		ctx, cancel := context.WithCancelCause(context.Background())
		w.Start(ctx, cancel, func() { cancel(nil) })
		ws[i] = w
		wg.Go(func() {
			for range w.ResultChan() {
				if left.Add(-1) == 0 {
					round <- struct{}{}
				}
			}
		})
	}
	defer func() {
		for _, w := range ws {
			w.Stop()
		}
		wg.Wait()
	}()
	for c.hub.Live() != watchers {
		runtimeGosched()
	}
	evs := make([]*watchcache.Event, events)
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		b.StopTimer()
		for i := range evs {
			evs[i] = apply()
		}
		b.StartTimer()
		left.Store(int64(watchers * events))
		for i, ev := range evs {
			c.hub.Batch(batch && i < events-1)
			_ = c.hub.Commit(func(tx hub.Tx) error {
				if got := tx.Dispatch(ev); got != watchers {
					b.Errorf("dispatched to %d watchers, want %d", got, watchers)
				}
				return nil
			})
		}
		<-round
		n += events
	}
	if live := c.hub.Live(); live != watchers {
		b.Fatalf("%d watchers in live dispatch, want %d (none lagged)", live, watchers)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n*watchers), "ns/delivery")
}
