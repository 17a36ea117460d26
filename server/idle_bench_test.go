package server

import (
	"context"
	"runtime"
	"testing"
	"time"
)

// BenchmarkHTTPIdleWatchers: what an idle HTTP watch costs the server. A
// child process (see fanoutChild) opens W watches (5,000; env
// LISTWATCH_BENCH_WATCHERS, bounded by file descriptors: each watch is one
// connection, one descriptor on each side) on a namespace of 1,000
// objects; nothing changes while they are open. Once the server's
// goroutine count has settled, it reports per watch the server process's live-heap growth,
// goroutine-stack growth and goroutines, then makes one write and reports
// its delivery latency to all W watches (p50, p99).
//
//	LISTWATCH_BENCH_WATCHERS=15000 go test -run '^$' -bench HTTPIdleWatchers -benchtime 1x ./server
func BenchmarkHTTPIdleWatchers(b *testing.B) {
	watchers := envInts(b, "LISTWATCH_BENCH_WATCHERS", 5000)[0]
	const objects = 1000
	env := newBenchEnv(b, objects)
	for b.Loop() {
		startRV, err := env.cache.GetCurrentResourceVersion(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		heap0, stack0, g0 := serverMemory()
		clients := startFanoutClients(b, env.ts.URL, watchers, startRV)
		settle(time.Second)
		heap1, stack1, g1 := serverMemory()
		w := float64(watchers)
		b.ReportMetric((float64(heap1)-float64(heap0))/w, "heap-B/watcher")
		b.ReportMetric((float64(stack1)-float64(stack0))/w, "stack-B/watcher")
		b.ReportMetric(float64(g1-g0)/w, "goroutines/watcher")
		writes := writeFanout(b, env, objects, time.Millisecond, 1) // one write
		rep := clients.finish(b, writes)
		for _, e := range rep.Errors {
			b.Error(e)
		}
		if rep.Delivered != int64(writes*watchers) {
			b.Errorf("delivered %d events, want %d", rep.Delivered, writes*watchers)
		}
		b.ReportMetric(time.Duration(rep.P50).Seconds()*1000, "event-p50-ms")
		b.ReportMetric(time.Duration(rep.P99).Seconds()*1000, "event-p99-ms")
	}
}

// serverMemory is this process's live heap (after GC), goroutine stacks
// and goroutine count.
func serverMemory() (heap, stack uint64, goroutines int) {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc, m.StackInuse, runtime.NumGoroutine()
}

// settle waits at least min, then until the goroutine count has not
// changed for a second (at most a minute in all).
func settle(min time.Duration) {
	start, last, since := time.Now(), runtime.NumGoroutine(), time.Now()
	for (time.Since(start) < min || time.Since(since) < time.Second) && time.Since(start) < time.Minute {
		time.Sleep(100 * time.Millisecond)
		if n := runtime.NumGoroutine(); n != last {
			last, since = n, time.Now()
		}
	}
}
