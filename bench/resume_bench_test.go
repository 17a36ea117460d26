package bench

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/storage"
)

// resumeWrites is the number of updates RESUME makes while the watcher is away.
const resumeWrites = 1000

// BenchmarkResume is RESUME: a watcher disconnects, 1,000 updates happen, it
// resumes from its last RV.
func BenchmarkResume(b *testing.B) {
	f := getFixture(b)
	for _, src := range f.sources() {
		b.Run(fmt.Sprintf("N=%d/writes=%d/source=%s", f.n, resumeWrites, src.name), func(b *testing.B) {
			var catchUp time.Duration
			var calls int64
			for b.Loop() {
				catchUp, calls = runResume(b, f, src)
			}
			b.ReportMetric(Ms(catchUp), "catchup-ms")
			b.ReportMetric(float64(calls), "storage-calls")
		})
	}
}

func runResume(b *testing.B, f *fixture, src source) (time.Duration, int64) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// Watch a few updates, remember the last RV, disconnect.
	w, err := src.s.Watch(ctx, resourcePrefix, storage.ListOptions{ResourceVersion: f.currentRV(b), Recursive: true,
		Predicate: everything(0)})
	if err != nil {
		b.Fatal(err)
	}
	for j := range 10 {
		if _, err := f.loader.Update(ctx, j, j+1); err != nil {
			b.Fatal(err)
		}
	}
	last := receive(b, w, 10, src.s.Versioner())
	w.Stop()
	for j := range resumeWrites {
		if _, err := f.loader.Update(ctx, (10+j)%f.n, j+1); err != nil {
			b.Fatal(err)
		}
	}
	before := src.backend.Counts()
	start := time.Now()
	w, err = src.s.Watch(ctx, resourcePrefix, storage.ListOptions{ResourceVersion: storage.RVAt(last), Recursive: true,
		Predicate: everything(0)})
	if err != nil {
		b.Fatal(err)
	}
	defer w.Stop()
	receive(b, w, resumeWrites, src.s.Versioner())
	return time.Since(start), src.backend.Counts().Sub(before).Requests()
}

// receive reads n data events from w and returns the RV of the last.
func receive(b *testing.B, w watch.Interface, n int, v storage.Versioner) uint64 {
	var last uint64
	for got := 0; got < n; {
		ev, ok := <-w.ResultChan()
		if !ok {
			b.Fatalf("watch closed after %d of %d events", got, n)
		}
		switch ev.Type {
		case watch.Error:
			b.Fatalf("watch error after %d of %d events: %v", got, n, ev.Object)
		case watch.Bookmark:
			continue
		}
		rv, err := v.ObjectResourceVersion(ev.Object)
		if err != nil {
			b.Fatal(err)
		}
		last = rv
		got++
	}
	return last
}
