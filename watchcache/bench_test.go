package watchcache

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
)

func loaded(b *testing.B, n int) *Cache {
	c, _ := newTestCache(b, nil)
	objs := make([]runtime.Object, n)
	for i := range objs {
		objs[i] = testWidget("bench", fmt.Sprintf("obj-%05d", i), 1, map[string]string{"app": fmt.Sprintf("app-%d", i%10)})
	}
	if err := c.Replace(objs, 1); err != nil {
		b.Fatal(err)
	}
	return c
}

// BenchmarkApply applies updates of 1 KiB widgets (their padding their
// own) to a cache of 10,000, with and without packing of each object.
func BenchmarkApply(b *testing.B) {
	for _, packing := range []bool{true, false} {
		b.Run(fmt.Sprintf("Packing=%t", packing), func(b *testing.B) {
			c, _ := newTestCache(b, func(cfg *Config) { cfg.NoPacking = !packing })
			objs, _ := decodedWorkload(b, 10_000, true)
			if err := c.Replace(objs, 1); err != nil {
				b.Fatal(err)
			}
			// Each object is applied once: the cache keeps what it is given.
			updates, _ := decodedWorkload(b, 1000, true)
			rv := uint64(100_000)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if i == len(updates) {
					b.StopTimer()
					updates, _ = decodedWorkload(b, 1000, true)
					i = 0
					b.StartTimer()
				}
				rv++
				if _, err := c.Apply(watchType("mod"), updates[i], rv); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
}

func BenchmarkList(b *testing.B) {
	for _, n := range []int{10_000, 50_000} {
		c := loaded(b, n)
		for _, sel := range []string{"all", "label-filter", "label-index"} {
			q := ListOptions{Key: "/widgets/", Recursive: true}
			switch sel {
			case "label-filter":
				q.Filter = appIs("app-3")
			case "label-index":
				q.Index = &IndexValue{Name: LabelIndex("app"), Value: "app-3"}
			}
			b.Run(fmt.Sprintf("n=%d/%s", n, sel), func(b *testing.B) {
				b.ReportAllocs()
				items := 0
				for b.Loop() {
					res, err := c.List(0, NotOlderThan, q)
					if err != nil {
						b.Fatal(err)
					}
					items = len(res.Items)
				}
				b.ReportMetric(float64(items), "items/op")
			})
		}
	}
}

func BenchmarkEventsSince(b *testing.B) {
	c := loaded(b, 1000)
	for rv := uint64(2); rv < 10_002; rv++ {
		if _, err := c.Apply(watchType("mod"), testWidget("bench", "obj-00001", rv, nil), rv); err != nil {
			b.Fatal(err)
		}
	}
	for _, batch := range []int{100, 1000} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				evs, _, err := c.EventsSince(5000, batch)
				if err != nil || len(evs) != batch {
					b.Fatal(len(evs), err)
				}
			}
		})
	}
}
