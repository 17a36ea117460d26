package bench

import (
	"context"
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/apis/example"
	k8sstorage "k8s.io/apiserver/pkg/storage"
	"k8s.io/klog/v2"

	"github.com/listwatch/listwatch/embedtest"
)

// peerIdleWatcherCounts are the sizes BenchmarkPeerIdleWatchers opens:
// K8SBENCH_PEER_IDLE, comma-separated (default 10000).
func peerIdleWatcherCounts() []int {
	var out []int
	for _, f := range strings.Split(envString("K8SBENCH_PEER_IDLE", "10000"), ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	return out
}

// BenchmarkPeerIdleWatchers: what an idle watcher costs each cache. Over
// K8SBENCH_PEER_OBJECTS pods it opens W watches, each on one pod's key
// (not recursive) from the current RV, that receive nothing, and reports
// per watcher the live-heap growth, the goroutine stack memory and the
// goroutines added (after GC, once the goroutine count has settled, the
// watches still open), then the time from a put of one pod to its
// watcher's receipt with all W registered.
func BenchmarkPeerIdleWatchers(b *testing.B) {
	klog.SetLogger(logr.Discard())
	peerConfig()
	objects := peerObjects()
	for _, watchers := range peerIdleWatcherCounts() {
		for run := 1; run <= peerRuns(); run++ {
			for _, be := range peerOrder(run) {
				b.Run(peerName(fmt.Sprintf("Watchers=%d", watchers), be.name, run), func(b *testing.B) {
					srv := embedtest.Start(b)
					primePods(b, srv, objects)
					store := be.new(b, srv)
					for range b.N {
						idleWatchers(b, srv, store, objects, watchers)
					}
				})
			}
		}
	}
}

func idleWatchers(b *testing.B, srv *embedtest.Server, store k8sstorage.Interface, objects, watchers int) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	list := &example.PodList{}
	if err := store.GetList(ctx, "/pods/", k8sstorage.ListOptions{Recursive: true, Predicate: k8sstorage.Everything}, list); err != nil {
		b.Fatal(err)
	}
	heapBefore, goroutinesBefore := settledHeap(), runtime.NumGoroutine()
	stackBefore := stackInUse()
	ws := make([]watch.Interface, watchers)
	for i := range ws {
		w, err := store.Watch(ctx, podKey(peerPod(i%objects, time.Time{})), k8sstorage.ListOptions{
			ResourceVersion: list.ResourceVersion, Predicate: k8sstorage.Everything})
		if err != nil {
			b.Fatal(err)
		}
		ws[i] = w
	}
	defer func() {
		for _, w := range ws {
			w.Stop()
		}
	}()
	settleGoroutines()
	heapAfter, goroutinesAfter := heapInUse(), runtime.NumGoroutine()
	stackAfter := stackInUse()
	b.ReportMetric((float64(heapAfter)-float64(heapBefore))/float64(watchers), "heap-B/watcher")
	b.ReportMetric((float64(stackAfter)-float64(stackBefore))/float64(watchers), "stack-B/watcher")
	b.ReportMetric(float64(goroutinesAfter-goroutinesBefore)/float64(watchers), "goroutines/watcher")

	// One event, to the last watcher's pod (its only watcher when
	// watchers <= objects).
	target := watchers - 1
	p := peerPod(target%objects, time.Now())
	start := time.Now()
	if _, err := srv.Client.Put(ctx, podKey(p), string(encodePod(b, p))); err != nil {
		b.Fatal(err)
	}
	select {
	case ev, ok := <-ws[target].ResultChan():
		if !ok || ev.Type != watch.Modified {
			b.Fatalf("watcher %d got %v (open %v), want MODIFIED", target, ev.Type, ok)
		}
	case <-time.After(30 * time.Second):
		b.Fatalf("watcher %d got no event in 30 s", target)
	}
	b.ReportMetric(ms(time.Since(start)), "event-ms")
}

// settleGoroutines waits until the goroutine count has not changed for a
// second: the same wait for both caches.
func settleGoroutines() {
	start, last, since := time.Now(), runtime.NumGoroutine(), time.Now()
	for time.Since(since) < time.Second {
		time.Sleep(100 * time.Millisecond)
		if n := runtime.NumGoroutine(); n != last {
			last, since = n, time.Now()
		}
		if time.Since(start) > time.Minute {
			return
		}
	}
}

// stackInUse is the memory of goroutine stacks.
func stackInUse() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.StackInuse
}
