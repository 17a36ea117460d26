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
		objs[i] = widget("bench", fmt.Sprintf("obj-%05d", i), 1, map[string]string{"app": fmt.Sprintf("app-%d", i%10)})
	}
	if err := c.Replace(objs, 1); err != nil {
		b.Fatal(err)
	}
	return c
}

func BenchmarkApply(b *testing.B) {
	c := loaded(b, 10_000)
	objs := make([]runtime.Object, 1000)
	for i := range objs {
		objs[i] = widget("bench", fmt.Sprintf("obj-%05d", i*7), 1, map[string]string{"app": "app-1"})
	}
	rv := uint64(1)
	b.ReportAllocs()
	for b.Loop() {
		rv++
		if _, err := c.Apply(watchType("mod"), objs[rv%1000], rv); err != nil {
			b.Fatal(err)
		}
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
		if _, err := c.Apply(watchType("mod"), widget("bench", "obj-00001", rv, nil), rv); err != nil {
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
