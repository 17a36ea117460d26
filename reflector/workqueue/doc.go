// Package workqueue provides the generic work queues controllers are built
// on: Queue, DelayingQueue and RateLimitingQueue, plus rate limiters.
//
// # Contract
//
//   - Fair: items are handed out by Get in the order they were first added.
//   - Stingy: an item added several times before a worker picks it up is
//     processed once (the "dirty" set).
//   - Never concurrent: an item handed out by Get is not handed out again
//     until its Done (the "processing" set). An Add while it is processing
//     is not lost: the item is queued again on Done.
//   - Shutdown: ShutDown makes Add a no-op; Get hands out what is left and
//     then reports shutdown. ShutDownWithDrain also waits until every item
//     handed out has been Done.
//   - Delays: AddAfter adds an item once its delay has elapsed; an item
//     already waiting keeps the earlier of its deadlines. A DelayingQueue
//     (and so a RateLimitingQueue) owns one goroutine from its constructor
//     until ShutDown, which waits for it: always shut the queue down.
//   - Rate limits: AddRateLimited waits as long as the RateLimiter says.
//     DefaultControllerRateLimiter is the maximum of a per-item exponential
//     backoff and an overall token bucket; Forget resets an item's backoff.
//
// Time comes from Config.Clock (the wall clock by default), so tests can use
// workqueuetest.FakeClock or run inside testing/synctest. Config.Metrics
// receives depth, adds, latency, work duration and retries, and, when it
// is a ProgressMetrics, can read the work in progress; NewPrometheusMetrics
// exports them under client-go's workqueue_* names. By default nothing is
// recorded.
//
// # Use
//
//	q := workqueue.NewRateLimiting[string](nil, workqueue.Config{})
//	defer q.ShutDown()
//	q.Add("default/web")
//	for {
//		key, shutdown := q.Get()
//		if shutdown {
//			return
//		}
//		if err := sync(key); err != nil {
//			q.AddRateLimited(key) // retry with backoff
//		} else {
//			q.Forget(key) // reset its backoff
//		}
//		q.Done(key)
//	}
package workqueue
