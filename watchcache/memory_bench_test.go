package watchcache

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	k8sruntime "k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/watchcache/internal/pack"
)

func liveHeap() int64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// decodedWorkload returns n objects shaped as the benchmark workload's
// (two labels, a node name, padded to about 1 KiB of JSON), decoded from
// their JSON as the etcd3 store would, and their mean encoded size. With
// distinct, each object's padding differs from every other's (as most
// content of real objects differs); otherwise every object has the same.
func decodedWorkload(b *testing.B, n int, distinct bool) ([]k8sruntime.Object, float64) {
	objs := make([]k8sruntime.Object, n)
	enc := 0
	for i := range objs {
		w := widget.NewWidget("bench", fmt.Sprintf("obj-%05d", i)).WithLabels(map[string]string{
			"app": fmt.Sprintf("app-%d", i%10), "tier": fmt.Sprintf("tier-%d", (i/10)%10)})

		w.Spec.NodeName = fmt.Sprintf("node-%d", i%100)
		w.ResourceVersion = fmt.Sprint(100 + i)
		pad := strings.Repeat("x", 820)
		if distinct {
			pad = fmt.Sprintf("%08d", i) + pad[8:]
		}
		w.Annotations = map[string]string{"bench.listwatch.dev/pad": pad}
		data, err := k8sruntime.Encode(widget.Codec, w)
		if err != nil {
			b.Fatal(err)
		}
		enc += len(data)
		if objs[i], _, err = widget.Codec.Decode(data, nil, &widget.Widget{}); err != nil {
			b.Fatal(err)
		}
	}
	return objs, float64(enc) / float64(n)
}

// BenchmarkMemory reports the heap per object of the decoded objects alone
// (objects-B/obj) and what a cache holding them adds (cache-B/obj; negative
// when the cache's packing saves more than its own structures cost),
// next to the encoded size, with and without packing, for objects whose
// padding is the same or differs.
func BenchmarkMemory(b *testing.B) {
	const n = 20_000
	for _, pad := range []string{"same", "distinct"} {
		for _, packing := range []bool{true, false} {
			b.Run(fmt.Sprintf("Padding=%s/Packing=%t", pad, packing), func(b *testing.B) {
				var objB, cacheB, enc float64
				for b.Loop() {
					before := liveHeap()
					objs, e := decodedWorkload(b, n, pad == "distinct")
					mid := liveHeap()
					c, _ := newTestCache(b, func(cfg *Config) { cfg.NoPacking = !packing })
					if err := c.Replace(objs, 1); err != nil {
						b.Fatal(err)
					}
					after := liveHeap()
					runtime.KeepAlive(objs)
					runtime.KeepAlive(c)
					objB, cacheB, enc = float64(mid-before)/n, float64(after-mid)/n, e
				}
				b.ReportMetric(objB, "objects-B/obj")
				b.ReportMetric(cacheB, "cache-B/obj")
				b.ReportMetric(enc, "encoded-B/obj")
				b.ReportMetric((objB+cacheB)/enc, "x-encoded")
			})
		}
	}
}

// BenchmarkMemoryEncoded reports the heap per object of a cache that keeps
// its objects encoded (Config.Codec) once nothing else references the
// decoded objects it was given, next to the encoded size, with and without
// packing.
func BenchmarkMemoryEncoded(b *testing.B) {
	const n = 20_000
	for _, packing := range []bool{true, false} {
		b.Run(fmt.Sprintf("Packing=%t", packing), func(b *testing.B) {
			var perObj, enc float64
			for b.Loop() {
				before := liveHeap()
				objs, e := decodedWorkload(b, n, false)
				c, _ := newTestCache(b, func(cfg *Config) {
					cfg.Codec, cfg.NoPacking = RuntimeCodec{Codec: widget.Codec, New: widget.New}, !packing
				})
				if err := c.Replace(objs, 1); err != nil {
					b.Fatal(err)
				}
				objs = nil
				after := liveHeap()
				runtime.KeepAlive(c)
				perObj, enc = float64(after-before)/n, e
			}
			b.ReportMetric(perObj, "cache-B/obj")
			b.ReportMetric(enc, "encoded-B/obj")
			b.ReportMetric(perObj/enc, "x-encoded")
		})
	}
}

// BenchmarkPackObject reports the cost of packing one decoded object of
// the benchmark workload (with distinct padding), once the packer has
// judged its places, next to decoding it.
func BenchmarkPackObject(b *testing.B) {
	const n = 4096
	objs, _ := decodedWorkload(b, n, true)
	b.Run("Pack", func(b *testing.B) {
		p := pack.New()
		for _, o := range objs[:512] {
			p.Object(o.DeepCopyObject())
		}
		copies := make([]k8sruntime.Object, n)
		i := 0
		for b.Loop() {
			if i%n == 0 {
				b.StopTimer()
				for j := range copies {
					copies[j] = objs[j].DeepCopyObject()
				}
				b.StartTimer()
			}
			p.Object(copies[i%n])
			i++
		}
	})
	b.Run("Decode", func(b *testing.B) {
		data, err := k8sruntime.Encode(widget.Codec, objs[0])
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, _, err := widget.Codec.Decode(data, nil, &widget.Widget{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
