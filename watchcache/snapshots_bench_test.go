package watchcache

import (
	"fmt"
	"runtime"
	"testing"

	k8sruntime "k8s.io/apimachinery/pkg/runtime"
)

// updated returns a cache of 10,000 widgets after 100,000 updates of
// random ones, each its own revision, with the ring large enough for all
// of them (the clock stands still, so the window never ends), and the
// newest revision.
func updated(b *testing.B, mod func(*Config)) (*Cache, uint64) {
	const objects, updates = 10_000, 100_000
	c, _ := newTestCache(b, mod)
	objs := make([]k8sruntime.Object, objects)
	for i := range objs {
		objs[i] = testWidget("bench", fmt.Sprintf("obj-%05d", i), 1, map[string]string{"app": fmt.Sprintf("app-%d", i%10)})
	}
	if err := c.Replace(objs, 1); err != nil {
		b.Fatal(err)
	}
	rv := uint64(1)
	for i := range updates {
		rv++
		n := (i * 7919) % objects // every object, in a scattered order
		w := testWidget("bench", fmt.Sprintf("obj-%05d", n), rv, map[string]string{"app": fmt.Sprintf("app-%d", n%10)})
		if _, err := c.Apply(watchType("mod"), w, rv); err != nil {
			b.Fatal(err)
		}
	}
	c.UpdateRV(rv)
	return c, rv
}

// BenchmarkSnapshotsAfterUpdates reports the heap the snapshots hold after
// 100,000 updates of 10,000 objects (snapshots-MB: the heap freed by a
// compaction to the newest revision, which drops every snapshot but the
// newest and keeps the history), the whole cache's heap before that
// (cache-MB), how many snapshots there are, and the cost of an exact list
// of a page of 500 at a revision a snapshot holds as is, for the default
// MaxSnapshots and a quarter of it, dropping the oldest snapshots (the
// default) and spacing them (SpacedSnapshots).
func BenchmarkSnapshotsAfterUpdates(b *testing.B) {
	for _, spaced := range []bool{false, true} {
		for _, max := range []int{DefaultMaxSnapshots, DefaultMaxSnapshots / 4} {
			b.Run(fmt.Sprintf("Spaced=%t/MaxSnapshots=%d", spaced, max), func(b *testing.B) {
				benchSnapshotsAfterUpdates(b, spaced, max)
			})
		}
	}
}

func benchSnapshotsAfterUpdates(b *testing.B, spaced bool, max int) {
	c, last := updated(b, func(cfg *Config) { cfg.MaxSnapshots, cfg.SpacedSnapshots = max, spaced })
	page := ListOptions{Key: "/widgets/", Recursive: true, Limit: 500}
	at := last - 10 // the newest snapshots are one per revision
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.List(at, Exact, page); err != nil {
			b.Fatal(err)
		}
	}
	snaps := c.Stats().Snapshots
	before := liveHeap()
	c.Compact(last)
	after := liveHeap()
	runtime.KeepAlive(c)
	b.ReportMetric(float64(before-after)/(1<<20), "snapshots-MB")
	b.ReportMetric(float64(before)/(1<<20), "cache-MB")
	b.ReportMetric(float64(snaps), "snapshots")
}
