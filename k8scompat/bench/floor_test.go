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
// cache's shape. It reports the median time of one list (ms/list, as
// BenchmarkPeerList does) beside the mean (ns/op, GC included).
//
//	go test -run '^$' -bench ListFloor -benchtime 40x ./bench
func BenchmarkListFloor(b *testing.B) {
	for _, objects := range []int{peerObjects(), 5 * peerObjects()} {
		src := make([]*example.Pod, objects)
		now := time.Now()
		for i := range src {
			src[i] = paddedPod(i, now, true)
		}
		for _, parts := range []int{1, 2} {
			b.Run(fmt.Sprintf("Objects=%d/Parts=%d", objects, parts), func(b *testing.B) {
				b.ReportAllocs()
				times := make([]time.Duration, 0, b.N)
				var sink []example.Pod
				for range b.N {
					start := time.Now()
					sink = copyPods(src, parts)
					times = append(times, time.Since(start))
				}
				if len(sink) != objects {
					b.Fatalf("copied %d pods, want %d", len(sink), objects)
				}
				slices.Sort(times)
				b.ReportMetric(ms(times[len(times)/2]), "ms/list")
			})
		}
	}
}

// copyPods allocates a []example.Pod of len(src) and copies *src[i] into
// element i, in parts contiguous parts on as many goroutines.
func copyPods(src []*example.Pod, parts int) []example.Pod {
	out := make([]example.Pod, len(src))
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
