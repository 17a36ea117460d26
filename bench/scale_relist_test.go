package bench

import (
	"context"
	goruntime "runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/storage/etcd3"
	"github.com/listwatch/listwatch/storage/value"
)

// relistMetrics records when the cacher's relist replaced the cache: the
// first watcher it took out of live dispatch once armed.
type relistMetrics struct {
	cacher.NoopMetrics
	armed    atomic.Bool
	replaced atomic.Pointer[time.Time]
}

// WatcherLagged implements cacher.Metrics.
func (m *relistMetrics) WatcherLagged() {
	if m.armed.Load() {
		now := time.Now()
		m.replaced.CompareAndSwap(nil, &now)
	}
}

// relistResult is what measureRelist reports.
type relistResult struct {
	relist   time.Duration // from the relist request to the cache replaced
	rejoin   time.Duration // from the cache replaced to every rejoin watcher having the gap's write
	peakHeap uint64        // the largest heap seen from the request to the end
	before   uint64        // the heap in use (after GC) before it
}

// measureRelist makes c relist (as a transformer change does) with
// rejoin watchers on the whole resource open, writes one object while the
// relist lists (it falls between the replaced cache and the new one), and
// measures the relist, the watchers' rejoin and the peak heap meanwhile.
func measureRelist(b *testing.B, ctx context.Context, srv *embedtest.Server, store *etcd3.Store, c *cacher.Cacher,
	m *relistMetrics, rejoin int) relistResult {
	rv, err := c.GetCurrentResourceVersion(ctx)
	if err != nil {
		b.Fatal(err)
	}
	watches := make([]watch.Interface, 0, rejoin)
	for range rejoin {
		w, err := c.Watch(ctx, "/widgets", storage.ListOptions{ResourceVersion: storage.RVAt(rv), Recursive: true,
			Predicate: storage.Everything})
		if err != nil {
			b.Fatal(err)
		}
		watches = append(watches, w)
	}
	defer func() {
		for _, w := range watches {
			w.Stop()
		}
	}()
	res := relistResult{before: liveHeap()}
	stopSampling := samplePeakHeap(&res.peakHeap)
	m.armed.Store(true)
	asked := time.Now()
	store.SetTransformer(value.Identity) // a transformer change: the cacher relists
	// The list of a large resource takes far longer: the write lands in it.
	time.Sleep(100 * time.Millisecond)
	resp, err := srv.Client.Put(ctx, scaleKey(1), string(scaleValue(b, 1, "gap")))
	if err != nil {
		b.Fatal(err)
	}
	want := uint64(resp.Header.Revision)
	var wg sync.WaitGroup
	var failed atomic.Int64
	for _, w := range watches {
		wg.Go(func() {
			for ev := range w.ResultChan() {
				if ev.Type == watch.Error {
					failed.Add(1)
					return
				}
				if r, err := (storage.APIObjectVersioner{}).ObjectResourceVersion(ev.Object); err == nil && r >= want {
					return
				}
			}
			failed.Add(1)
		})
	}
	wg.Wait()
	done := time.Now()
	stopSampling()
	if f := failed.Load(); f > 0 {
		b.Fatalf("%d of %d watchers ended before the write made during the relist", f, rejoin)
	}
	replaced := m.replaced.Load()
	if replaced == nil {
		b.Fatal("the relist took no watcher out of live dispatch")
	}
	res.relist, res.rejoin = replaced.Sub(asked), done.Sub(*replaced)
	return res
}

// samplePeakHeap records the largest heap in use (objects) into peak every
// 5 ms until the returned function is called.
func samplePeakHeap(peak *uint64) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			*peak = max(*peak, s[0].Value.Uint64())
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	})
	return func() {
		close(done)
		wg.Wait()
		goruntime.GC()
	}
}
