package watcher

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"

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
	f := startFanout(b, c, watchers)
	evs := make([]*watchcache.Event, events)
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		b.StopTimer()
		for i := range evs {
			evs[i] = f.apply()
		}
		b.StartTimer()
		f.left.Store(int64(watchers * events))
		for i, ev := range evs {
			c.hub.Batch(batch && i < events-1)
			_ = c.hub.Commit(func(tx hub.Tx) error {
				if got := tx.Dispatch(ev); got != watchers {
					b.Errorf("dispatched to %d watchers, want %d", got, watchers)
				}
				return nil
			})
		}
		<-f.done
		n += events
	}
	if live := c.hub.Live(); live != watchers {
		b.Fatalf("%d watchers in live dispatch, want %d (none lagged)", live, watchers)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(n*watchers), "ns/delivery")
}

// BenchmarkDispatchPaced measures the process CPU per delivery of a paced
// feed: one change every Gap to 1,000 started watchers of every object,
// each read by a client goroutine, with the hub's wake-up coalescing off
// and at 2 ms (cacher.DefaultWakeCoalesce). cpu-ns/delivery is the
// process's user and system CPU over the run divided by the deliveries;
// lag-ms is how long after its commit the last client got the last change.
func BenchmarkDispatchPaced(b *testing.B) {
	for _, gap := range []time.Duration{250 * time.Microsecond, time.Millisecond} {
		for _, coalesce := range []time.Duration{0, 2 * time.Millisecond} {
			b.Run(fmt.Sprintf("Gap=%v/Coalesce=%v", gap, coalesce), func(b *testing.B) {
				benchmarkDispatchPaced(b, gap, coalesce)
			})
		}
	}
}

func benchmarkDispatchPaced(b *testing.B, gap, coalesce time.Duration) {
	const watchers, events = 1000, 2000
	c := newDispatchRig(b)
	c.hub = hub.New(hub.Config{Wall: clock.RealClock{}, Metrics: noMetrics{}, Coalesce: coalesce})
	c.env.Hub = c.hub
	f := startFanout(b, c, watchers)
	evs := make([]*watchcache.Event, events)
	var cpu time.Duration
	var lag time.Duration
	for b.Loop() {
		b.StopTimer()
		for i := range evs {
			evs[i] = f.apply()
		}
		f.left.Store(watchers * events)
		b.StartTimer()
		before := processCPU(b)
		next := time.Now()
		for _, ev := range evs {
			if d := time.Until(next); d > 0 {
				time.Sleep(d)
			}
			next = next.Add(gap)
			_ = c.hub.Commit(func(tx hub.Tx) error { tx.Dispatch(ev); return nil })
		}
		last := time.Now()
		<-f.done
		lag += time.Since(last)
		cpu += processCPU(b) - before
	}
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N*watchers*events), "cpu-ns/delivery")
	b.ReportMetric(float64(lag.Milliseconds())/float64(b.N), "lag-ms")
}

// fanout is the fan-out benchmarks' feed: fanoutObjects widgets in a
// dispatch rig's cache and started watchers of every widget, each read by
// a client goroutine; done is signalled when left, the deliveries still
// expected, reaches zero.
type fanout struct {
	b    *testing.B
	c    *dispatchRig
	rv   uint64
	left atomic.Int64
	done chan struct{}
}

const fanoutObjects = 100

// startFanout fills c's cache and starts watchers watchers in live
// dispatch on c's hub; they stop at the end of b.
func startFanout(b *testing.B, c *dispatchRig, watchers int) *fanout {
	f := &fanout{b: b, c: c, rv: 1, done: make(chan struct{}, 1)}
	for range fanoutObjects {
		f.apply()
	}
	var wg sync.WaitGroup
	ws := make([]*Watcher, watchers)
	for i := range ws {
		w := c.env.New("/widgets", storage.ListOptions{Recursive: true,
			Predicate: storage.SelectionPredicate{GetAttrs: widget.GetAttrs}})
		w.Plan = Plan{Pos: f.rv}
		// What the cacher's startWatcher does: the end of the context
		// wakes a watcher that has no goroutine, so that Stop returns.
		ctx, cancel := context.WithCancelCause(context.Background())
		stopWake := context.AfterFunc(ctx, w.Wake)
		w.Start(ctx, cancel, func() { stopWake(); cancel(nil) })
		ws[i] = w
		wg.Go(func() {
			for range w.ResultChan() {
				if f.left.Add(-1) == 0 {
					f.done <- struct{}{}
				}
			}
		})
	}
	b.Cleanup(func() {
		for _, w := range ws {
			w.Stop()
		}
		wg.Wait()
	})
	for c.hub.Live() != watchers {
		runtimeGosched()
	}
	return f
}

// apply updates the next widget in the cache, one revision, and returns
// the change, not dispatched.
func (f *fanout) apply() *watchcache.Event {
	f.rv++
	o := widget.NewWidget("ns", fmt.Sprintf("w%04d", f.rv%fanoutObjects))
	ev, err := f.c.cache.Apply(watch.Modified, o, f.rv)
	if err != nil {
		f.b.Fatal(err)
	}
	f.c.cache.UpdateRV(f.rv)
	return ev
}

// processCPU is the user and system CPU the process has used.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
