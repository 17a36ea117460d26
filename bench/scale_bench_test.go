package bench

import (
	"context"
	"flag"
	"fmt"
	goruntime "runtime"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/storage/etcd3"
	"github.com/listwatch/listwatch/watchcache"
)

var (
	scaleObjects  = flag.Int("scale.objects", 1000000, "BenchmarkScale: objects of about 1 KiB to prime")
	scaleWatchers = flag.Int("scale.watchers", 100000, "BenchmarkScale: idle in-process watchers to open")
	scaleEncoded  = flag.Bool("scale.encoded", false, "BenchmarkScale: the cacher keeps its objects encoded (cacher.Config.Codec)")
	scaleRejoin   = flag.Int("scale.rejoin", 10000, "BenchmarkScale: watchers of the whole resource that rejoin after a relist")
)

// BenchmarkScale is SCALE (make bench-scale): a cacher over
// -scale.objects objects of about 1 KiB on an etcd of its own, with
// -scale.watchers idle watchers (each on one key of its own), keeping its
// objects decoded or, with -scale.encoded, encoded. It reports the
// priming time (etcd writes) and the cacher's load time, the live heap per
// cached object and per watcher (once idle watchers gave up their goroutines), goroutine
// stack bytes and goroutines per watcher, and the latency of
// one event to the single watcher of its key with all the others
// registered (dispatch visits only that one). Then, with -scale.rejoin more
// watchers on the whole resource, it makes the cacher relist (a transformer
// change) with one write made during the list, and reports the relist's
// time, the peak heap while it ran (relist-peak-GiB, and over the steady
// heap before it: relist-extra-GiB) and the time from the cache being
// replaced until every rejoin watcher has that write (rejoin-ms: they
// catch up through one shared read of etcd's history).
func BenchmarkScale(b *testing.B) {
	n, w := *scaleObjects, *scaleWatchers
	b.Run(fmt.Sprintf("objects=%d/watchers=%d/encoded=%v", n, w, *scaleEncoded), func(b *testing.B) {
		srv := embedtest.Start(b, embedtest.Options{QuotaBackendBytes: 16 << 30})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
		defer cancel()
		start := time.Now()
		encoded := primeScale(b, ctx, srv, n)
		priming := time.Since(start)
		rm := &relistMetrics{}
		store, err := etcd3.New(etcd3.Config{Client: srv.Client, Codec: widget.Codec, NewFunc: widget.New,
			NewListFunc: widget.NewList, ResourcePrefix: "/widgets"})
		if err != nil {
			b.Fatal(err)
		}
		defer store.Close()
		before := liveHeap()
		start = time.Now()
		cc := cacher.Config{Storage: store, ResourcePrefix: "/widgets", NewFunc: widget.New,
			NewListFunc: widget.NewList, GetAttrs: widget.GetAttrs, Metrics: rm}
		if *scaleEncoded {
			cc.Codec = watchcache.RuntimeCodec{Codec: widget.Codec, New: widget.New, Versioner: storage.APIObjectVersioner{}}
		}
		c, stopCacher, err := runCacher(ctx, cc)
		if err != nil {
			b.Fatal(err)
		}
		defer stopCacher()
		load := time.Since(start)
		cached := liveHeap()
		perObject := float64(int64(cached)-int64(before)) / float64(n)

		goroutines, stacks := goruntime.NumGoroutine(), stackInUse()
		watches := make([]watch.Interface, 0, w)
		rv, _ := c.GetCurrentResourceVersion(ctx)
		for i := range w {
			wi, err := c.Watch(ctx, scaleKey(i%n), storage.ListOptions{ResourceVersion: storage.RVAt(rv), Predicate: storage.Everything})
			if err != nil {
				b.Fatalf("watch %d: %v", i, err)
			}
			watches = append(watches, wi)
		}
		// Idle watchers give up their goroutines once they joined live
		// dispatch: wait for that (at most 15 s).
		for deadline := time.Now().Add(15 * time.Second); goruntime.NumGoroutine() > goroutines+w/100 &&
			time.Now().Before(deadline); {
			time.Sleep(100 * time.Millisecond)
		}
		perWatcher := float64(int64(liveHeap())-int64(cached)) / float64(max(w, 1))
		stackPer := float64(int64(stackInUse())-int64(stacks)) / float64(max(w, 1))
		goroutinesPer := float64(goruntime.NumGoroutine()-goroutines) / float64(max(w, 1))

		var latency time.Duration
		for range b.N {
			sent := time.Now()
			if _, err := srv.Client.Put(ctx, scaleKey(0), string(scaleValue(b, 0, "updated"))); err != nil {
				b.Fatal(err)
			}
			if w > 0 {
				select {
				case <-watches[0].ResultChan():
				case <-time.After(time.Minute):
					b.Fatal("the watcher of the updated key got nothing")
				}
			}
			latency = time.Since(sent)
		}
		relist := measureRelist(b, ctx, srv, store, c, rm, *scaleRejoin)
		for _, wi := range watches {
			wi.Stop()
		}
		b.ReportMetric(relist.relist.Seconds(), "relist-s")
		b.ReportMetric(float64(relist.peakHeap)/float64(1<<30), "relist-peak-GiB")
		b.ReportMetric(float64(int64(relist.peakHeap)-int64(relist.before))/float64(1<<30), "relist-extra-GiB")
		b.ReportMetric(float64(relist.rejoin.Microseconds())/1000, "rejoin-ms")
		b.ReportMetric(float64(*scaleRejoin), "rejoin-watchers")
		b.ReportMetric(priming.Seconds(), "prime-s")
		b.ReportMetric(load.Seconds(), "load-s")
		b.ReportMetric(perObject, "heap-B/obj")
		b.ReportMetric(perObject/encoded, "x-encoded")
		b.ReportMetric(float64(cached-before)/float64(1<<30), "cache-GiB")
		b.ReportMetric(perWatcher, "heap-B/watcher")
		b.ReportMetric(stackPer, "stack-B/watcher")
		b.ReportMetric(goroutinesPer, "goroutines/watcher")
		b.ReportMetric(float64(latency.Microseconds())/1000, "event-ms")
	})
}

// stackInUse is the memory of goroutine stacks.
func stackInUse() uint64 {
	var m goruntime.MemStats
	goruntime.ReadMemStats(&m)
	return m.StackInuse
}

func scaleKey(i int) string { return fmt.Sprintf("/widgets/ns-%d/w-%07d", i%100, i) }

// scaleValue is the encoded Widget i, padded to about 1 KiB.
func scaleValue(b *testing.B, i int, tag string) []byte {
	obj := widget.NewWidget(fmt.Sprintf("ns-%d", i%100), fmt.Sprintf("w-%07d", i)).WithLabels(map[string]string{"app": fmt.Sprintf("app-%d", i%20)})
	obj.Spec.NodeName = fmt.Sprintf("node-%d", i%1000)
	obj.Spec.Data = tag + strings.Repeat("x", 800)
	data, err := runtime.Encode(widget.Codec, obj)
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// primeScale writes n objects straight to etcd, in transactions of 128
// (etcd's default limit), and returns their mean encoded size.
func primeScale(b *testing.B, ctx context.Context, srv *embedtest.Server, n int) float64 {
	total := 0
	ops := make([]clientv3.Op, 0, 128)
	for i := range n {
		v := scaleValue(b, i, "")
		total += len(v)
		ops = append(ops, clientv3.OpPut(scaleKey(i), string(v)))
		if len(ops) == cap(ops) || i == n-1 {
			if _, err := srv.Client.Txn(ctx).Then(ops...).Commit(); err != nil {
				b.Fatal(err)
			}
			ops = ops[:0]
		}
	}
	return float64(total) / float64(n)
}
