package watcher

import (
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
// committed and dispatched as the feed does, to 1,000 watchers of every
// object in direct mode, each read by a client goroutine, until every
// client has them all (ns/delivery is per watcher and event). It is the
// cacher's share of an unpaced fan-out: dispatch, the channel sends and
// the wake-ups of the clients. Events=1 is a feed that finds no other
// event waiting; Events=8 one that finds a backlog, handed over event by
// event (Batch=false) or together (Batch=true, see hub.batching).
func BenchmarkDispatchFanout(b *testing.B) {
	for _, events := range []int{1, 8} {
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
	var left atomic.Int64
	round := make(chan struct{}, 1)
	var wg sync.WaitGroup
	ws := make([]*Watcher, watchers)
	for i := range ws {
		ws[i] = c.addTestWatcher("/widgets", true, storage.Everything)
		wg.Go(func() {
			for range ws[i].result {
				if left.Add(-1) == 0 {
					round <- struct{}{}
				}
			}
		})
	}
	defer func() {
		for _, w := range ws {
			close(w.result)
		}
		wg.Wait()
	}()
	const objects = 100
	rv := uint64(1)
	apply := func() *watchcache.Event {
		rv++
		o := widget.NewWidget("ns", fmt.Sprintf("w%04d", rv%objects))
		ev, err := c.cache.Apply(watch.Modified, o, rv)
		if err != nil {
			b.Fatal(err)
		}
		return ev
	}
	for range objects {
		apply()
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
	for _, w := range ws {
		if _, direct, _ := c.hub.State(w.e); !direct {
			b.Fatal("a watcher left direct mode")
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n*watchers), "ns/delivery")
}
