package workqueue_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/listwatch/listwatch/reflector/workqueue"
)

// BenchmarkQueue measures Add+Get+Done round trips.
//
//   - serial: one goroutine adds a distinct key, gets it and marks it done.
//   - parallel: producers=workers=GOMAXPROCS; each op is one item through.
//   - hot-key: every op adds the same key while it is being processed, the
//     de-duplication path.
func BenchmarkQueue(b *testing.B) {
	keys := make([]string, 1024)
	for i := range keys {
		keys[i] = fmt.Sprintf("ns/obj-%05d", i)
	}

	b.Run("serial", func(b *testing.B) {
		q := workqueue.New[string](workqueue.Config{})
		defer q.ShutDown()
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			q.Add(keys[i%len(keys)])
			item, _ := q.Get()
			q.Done(item)
			i++
		}
	})

	b.Run("parallel", func(b *testing.B) {
		q := workqueue.New[int](workqueue.Config{})
		b.ReportAllocs()
		var workers sync.WaitGroup
		for range 4 {
			workers.Go(func() {
				for {
					item, shutdown := q.Get()
					if shutdown {
						return
					}
					q.Done(item)
				}
			})
		}
		b.ResetTimer()
		b.RunParallel(func(pb *testing.PB) {
			i := 0
			for pb.Next() {
				q.Add(i) // distinct per goroutine is not needed: dedup is part of the cost
				i++
			}
		})
		q.ShutDownWithDrain()
		workers.Wait()
	})

	b.Run("hot-key", func(b *testing.B) {
		q := workqueue.New[string](workqueue.Config{})
		defer q.ShutDown()
		b.ReportAllocs()
		q.Add("hot")
		for b.Loop() {
			item, _ := q.Get()
			q.Add(item) // dirty while processing
			q.Add(item) // de-duplicated
			q.Done(item)
		}
	})
}

// BenchmarkRateLimitingQueueAddRateLimited measures AddRateLimited with a
// zero delay (the item goes straight to the queue) through the default
// limiter, then Get/Done/Forget.
func BenchmarkRateLimitingQueueAddRateLimited(b *testing.B) {
	q := workqueue.NewRateLimiting[int](
		workqueue.NewItemExponentialFailureRateLimiter[int](0, 0), workqueue.Config{})
	defer q.ShutDown()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		q.AddRateLimited(i % 1024)
		item, _ := q.Get()
		q.Forget(item)
		q.Done(item)
		i++
	}
}
