package bench

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/listwatch/listwatch/storage/counting"
)

// BenchmarkMemory is MEMORY: heap in use after a new cacher has loaded the
// N objects, per object, and its ratio to the mean encoded size.
func BenchmarkMemory(b *testing.B) {
	f := getFixture(b)
	if f.cache == nil {
		b.Skip("no cacher available")
	}
	b.Run(fmt.Sprintf("N=%d/source=cache", f.n), func(b *testing.B) {
		var perObject float64
		for b.Loop() {
			perObject = measureCacheHeap(b, f)
		}
		b.ReportMetric(perObject, "bytes/obj")
		b.ReportMetric(f.meanSize, "encoded-bytes/obj")
		b.ReportMetric(perObject/f.meanSize, "x-encoded")
	})
}

func measureCacheHeap(b *testing.B, f *fixture) float64 {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	before := liveHeap()
	c, stop, err := newCache(ctx, counting.New(f.store))
	if err != nil {
		b.Fatal(err)
	}
	after := liveHeap()
	runtime.KeepAlive(c)
	stop()
	return float64(int64(after)-int64(before)) / float64(f.n)
}

// liveHeap returns the bytes of live heap objects after a full collection.
func liveHeap() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
