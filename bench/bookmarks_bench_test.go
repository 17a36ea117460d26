package bench

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
)

// BenchmarkIdleBookmarks: 10,000 idle watchers that allow bookmarks, over
// one simulated minute of the cacher's clock (a fake clock stepped a second
// at a time, so the minute takes a few real seconds). It reports the
// bookmark events delivered per simulated second (bookmarks/s; Kubernetes'
// cadence, one a minute per watcher, is 10,000/60 ≈ 167) and the most
// delivered in any one second (peak-bookmarks/s: the spread).
func BenchmarkIdleBookmarks(b *testing.B) {
	const watchers = 10000
	f := getFixture(b)
	for range b.N {
		clk := clocktesting.NewFakeClock(time.Now())
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
		c, stop, err := runCacher(ctx, cacher.Config{Storage: f.store, ResourcePrefix: resourcePrefix,
			NewFunc: widget.New, NewListFunc: widget.NewList, GetAttrs: widget.GetAttrs, Clock: clk})
		if err != nil {
			b.Fatal(err)
		}
		rv := f.currentRV(b)
		var count atomic.Int64
		var readers sync.WaitGroup
		ws := make([]watch.Interface, 0, watchers)
		for i := range watchers {
			w, err := c.Watch(ctx, resourcePrefix+"/"+Namespace+"/"+Name(i%f.n), storage.ListOptions{ResourceVersion: rv,
				Predicate: storage.SelectionPredicate{AllowWatchBookmarks: true}})
			if err != nil {
				b.Fatal(err)
			}
			ws = append(ws, w)
			readers.Go(func() {
				for ev := range w.ResultChan() {
					if ev.Type == watch.Bookmark {
						count.Add(1)
					}
				}
			})
		}
		b.ResetTimer()
		peak := int64(0)
		for range 60 {
			before := count.Load()
			clk.Step(time.Second)
			settle(&count)
			peak = max(peak, count.Load()-before)
		}
		b.StopTimer()
		total := count.Load()
		for _, w := range ws {
			w.Stop()
		}
		readers.Wait()
		stop()
		cancel()
		b.ReportMetric(float64(total)/60, "bookmarks/s")
		b.ReportMetric(float64(peak), "peak-bookmarks/s")
		b.ReportMetric(float64(total)/watchers, "bookmarks/watcher/min")
	}
}

// settle waits until n stops changing for 20 ms (at most 2 s).
func settle(n *atomic.Int64) {
	last, since := n.Load(), time.Now()
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
		if cur := n.Load(); cur != last {
			last, since = cur, time.Now()
		} else if time.Since(since) >= 20*time.Millisecond {
			return
		}
	}
}
