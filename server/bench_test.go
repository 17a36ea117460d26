package server

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/storage"
)

// BenchmarkHTTPList measures a whole LIST response of N workload objects
// over HTTP (JSON): from the cache (RV "0"), consistent from the cache
// (RV ""), its first page of 500 from the cache, and straight from etcd; with a
// cache of decoded objects (Cache=decoded) and one keeping the served JSON
// (Cache=encoded, CacheCodec: lists copy the cached bytes). N is 10,000;
// LISTWATCH_BENCH_N (e.g. "10000,50000") sets it. The reported MB/s is
// response bytes per second; heap-B/obj is the cache's heap per object
// (the heap after it is ready, minus the heap before, after GC).
//
//	go test -run '^$' -bench HTTPList -benchmem ./server
func BenchmarkHTTPList(b *testing.B) {
	for _, n := range envInts(b, "LISTWATCH_BENCH_N", 10000) {
		for _, mode := range []string{"decoded", "encoded"} {
			b.Run(fmt.Sprintf("N=%d/Cache=%s", n, mode), func(b *testing.B) {
				var mods []func(*cacher.Config)
				if mode == "encoded" {
					mods = append(mods, func(cc *cacher.Config) { cc.Codec = CacheCodec(widgets(nil)) })
				}
				env := newBenchEnv(b, n, mods...)
				for _, c := range []struct {
					name, path string
					items      int
				}{
					{"cache-rv0", "/namespaces/bench/widgets?resourceVersion=0", n},
					{"cache-consistent", "/namespaces/bench/widgets", n},
					{"cache-page500", "/namespaces/bench/widgets?limit=500", min(n, 500)},
					{"etcd", "/namespaces/bench/rawwidgets", n},
				} {
					b.Run(c.name, func(b *testing.B) {
						benchList(b, env, c.path, c.items)
						b.ReportMetric(float64(env.cacheHeap)/float64(n), "heap-B/obj")
					})
				}
			})
		}
	}
}

func benchList(b *testing.B, env *benchEnv, path string, n int) {
	b.ReportAllocs()
	url := env.ts.URL + apiBase + path
	var bytes int64
	for b.Loop() {
		resp, err := env.client.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		nb, err := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("list: %v %d", err, resp.StatusCode)
		}
		bytes = nb
	}
	b.SetBytes(bytes)
	b.ReportMetric(float64(n), "objects")
}

var (
	fanoutDuration = flag.Duration("fanout.duration", 0,
		"how long the HTTP FANOUT writer writes (default 3s, or LISTWATCH_BENCH_FANOUT_DURATION)")
	fanoutRate = flag.Int("fanout.rate", 0,
		"HTTP FANOUT writes per second (default 200, or LISTWATCH_BENCH_FANOUT_RATE; negative: as fast as possible)")
)

// fanoutSettings returns the writer's duration and rate.
func fanoutSettings(b *testing.B) (time.Duration, int) {
	d, rate := *fanoutDuration, *fanoutRate
	if d == 0 {
		d = 3 * time.Second
		if s := os.Getenv("LISTWATCH_BENCH_FANOUT_DURATION"); s != "" {
			v, err := time.ParseDuration(s)
			if err != nil {
				b.Fatal(err)
			}
			d = v
		}
	}
	if rate == 0 {
		rate = envInts(b, "LISTWATCH_BENCH_FANOUT_RATE", 200)[0]
	}
	return d, rate
}

// BenchmarkHTTPFanout is HTTP FANOUT: W HTTP watchers (200; env
// LISTWATCH_BENCH_WATCHERS), each on its own connection decoding the JSON
// stream with httplw into unstructured objects, and one writer updating
// 1,000 objects round-robin through the cacher at a fixed rate (200/s;
// -fanout.rate) for a fixed time (3 s; -fanout.duration=20s for the
// full run). The watchers run in a child process (see fanoutChild), so the
// benchmark process's CPU is the server side. Reported: delivered events/s
// (W x writes / time from the first write until every watcher has every
// write), write-to-delivery latency p50/p99, server-side CPU per
// delivered event (HTTP server, cacher, embedded etcd and writer), the
// clients' CPU per delivered event, and encodes per write (1 when every
// watcher shares one encoding).
//
//	go test -run '^$' -bench HTTPFanout ./server -args -fanout.duration=20s
func BenchmarkHTTPFanout(b *testing.B) {
	watchers := envInts(b, "LISTWATCH_BENCH_WATCHERS", 200)[0]
	dur, rate := fanoutSettings(b)
	const objects = 1000
	env := newBenchEnv(b, objects)
	for b.Loop() {
		r := runFanout(b, env, watchers, objects, dur, rate)
		b.ReportMetric(r.eventsPerSec, "events/s")
		b.ReportMetric(r.p50.Seconds()*1000, "p50-ms")
		b.ReportMetric(r.p99.Seconds()*1000, "p99-ms")
		b.ReportMetric(r.serverCPU.Seconds()*1e6, "server-cpu-µs/event")
		b.ReportMetric(r.clientCPU.Seconds()*1e6, "client-cpu-µs/event")
		b.ReportMetric(float64(r.writes), "writes")
		b.ReportMetric(r.encodesPerWrite, "encodes/write")
		b.ReportMetric(float64(r.rewatches), "rewatches")
	}
}

type fanoutResult struct {
	eventsPerSec    float64
	p50, p99        time.Duration
	serverCPU       time.Duration // per delivered event
	clientCPU       time.Duration // per delivered event
	writes          int
	encodesPerWrite float64
	rewatches       int64
}

func runFanout(b *testing.B, env *benchEnv, watchers, objects int, dur time.Duration, rate int) fanoutResult {
	startRV, err := env.cache.GetCurrentResourceVersion(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	clients := startFanoutClients(b, env.ts.URL, watchers, startRV)
	encodes0 := env.srv.enc.Encodes.Load()
	cpu0 := processCPU()
	start := time.Now()
	writes := writeFanout(b, env, objects, dur, rate)
	rep := clients.finish(b, writes)
	cpu := processCPU() - cpu0
	for _, e := range rep.Errors {
		b.Error(e)
	}
	if rep.Delivered != int64(writes*watchers) {
		b.Errorf("delivered %d events, want %d", rep.Delivered, writes*watchers)
	}
	elapsed := time.Duration(rep.LastDelivery - start.UnixNano())
	delivered := max(rep.Delivered, 1)
	return fanoutResult{
		eventsPerSec: float64(rep.Delivered) / elapsed.Seconds(),
		p50:          time.Duration(rep.P50), p99: time.Duration(rep.P99),
		serverCPU:       cpu / time.Duration(delivered),
		clientCPU:       time.Duration(rep.CPU / delivered),
		writes:          writes,
		encodesPerWrite: float64(env.srv.enc.Encodes.Load()-encodes0) / float64(max(writes, 1)),
		rewatches:       rep.Rewatches,
	}
}

// writeFanout updates objects round-robin through the cacher, stamping the
// write time in an annotation, at rate writes/s (negative: unpaced) for
// dur. It returns the number of writes.
func writeFanout(b *testing.B, env *benchEnv, objects int, dur time.Duration, rate int) int {
	ctx := context.Background()
	start := time.Now()
	n := 0
	for time.Since(start) < dur {
		if rate > 0 {
			if wait := time.Until(start.Add(time.Duration(n) * time.Second / time.Duration(rate))); wait > 0 {
				time.Sleep(wait) // pacing the writer, not synchronisation
			}
		}
		key := fmt.Sprintf("/widgets/bench/obj-%05d", n%objects)
		out := &unstructured.Unstructured{}
		err := env.cache.GuaranteedUpdate(ctx, key, out, false, nil,
			func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
				u := in.(*unstructured.Unstructured).DeepCopy()
				ann := u.GetAnnotations()
				ann["bench/ts"] = strconv.FormatInt(time.Now().UnixNano(), 10)
				u.SetAnnotations(ann)
				return u, nil, nil
			}, nil, storage.UpdateOptions{})
		if err != nil {
			b.Fatal(err)
		}
		n++
	}
	return n
}

// processCPU is the user+system CPU time this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
