package bench

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"k8s.io/apiserver/pkg/apis/example"
)

// BenchmarkListFloor is the least time any cache that keeps each pod as a
// separate object can take to answer a full list as an example.PodList:
// allocate the []example.Pod and copy every cached pod into it by value
// (Kubernetes' storage.Interface returns items by value, so a cache must
// copy). No lookup, no predicate, no locking, no revision wait. Parts=2
// copies the two halves on two goroutines. The source pods are allocated
// one by one, as a cache's are, and stay live, so the GC sees a heap of a
// cache's shape (of a cache that does not compact its objects: its GC
// costs more than listwatch's, so the allocating variants are an upper
// bound on the floor, Reuse a lower one). It reports the median time of one list (ms/list, as
// BenchmarkPeerList does) beside the mean (ns/op, GC included). Reuse
// copies into the same slice every time: the copy alone, with no
// allocation, zeroing or garbage (no cache can do that for its callers).
//
//	go test -run '^$' -bench ListFloor -benchtime 40x ./bench
func BenchmarkListFloor(b *testing.B) {
	for _, objects := range []int{peerObjects(), 5 * peerObjects()} {
		src := make([]*example.Pod, objects)
		now := time.Now()
		for i := range src {
			src[i] = paddedPod(i, now, true)
		}
		for _, reuse := range []bool{false, true} {
			for _, parts := range []int{1, 2} {
				name := fmt.Sprintf("Objects=%d/Parts=%d", objects, parts)
				if reuse {
					name += "/Reuse"
				}
				b.Run(name, func(b *testing.B) {
					b.ReportAllocs()
					times := make([]time.Duration, 0, b.N)
					var out []example.Pod
					for range b.N {
						if !reuse {
							out = nil
						}
						start := time.Now()
						out = copyPods(src, out, parts)
						times = append(times, time.Since(start))
					}
					if len(out) != objects {
						b.Fatalf("copied %d pods, want %d", len(out), objects)
					}
					slices.Sort(times)
					b.ReportMetric(ms(times[len(times)/2]), "ms/list")
				})
			}
		}
	}
}

// copyPods copies *src[i] into element i of out, in parts contiguous
// parts on as many goroutines, and returns out; a nil out is allocated
// first (of len(src)).
func copyPods(src []*example.Pod, out []example.Pod, parts int) []example.Pod {
	if out == nil {
		out = make([]example.Pod, len(src))
	}
	var wg sync.WaitGroup
	for p := 1; p < parts; p++ {
		wg.Go(func() {
			for i := p * len(src) / parts; i < (p+1)*len(src)/parts; i++ {
				out[i] = *src[i]
			}
		})
	}
	for i := 0; i < len(src)/parts; i++ {
		out[i] = *src[i]
	}
	wg.Wait()
	return out
}
