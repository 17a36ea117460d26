package workqueue

// RateLimitingQueue is a DelayingQueue whose retries are paced by a
// RateLimiter. Like DelayingQueue it owns one goroutine until ShutDown.
type RateLimitingQueue[T comparable] struct {
	*DelayingQueue[T]
	limiter RateLimiter[T]
}

// NewRateLimiting returns an empty RateLimitingQueue using limiter; nil
// means DefaultControllerRateLimiter on cfg.Clock.
func NewRateLimiting[T comparable](limiter RateLimiter[T], cfg Config) *RateLimitingQueue[T] {
	if limiter == nil {
		limiter = DefaultControllerRateLimiter[T](cfg.Clock)
	}
	return &RateLimitingQueue[T]{DelayingQueue: NewDelaying[T](cfg), limiter: limiter}
}

// AddRateLimited adds item after the delay the rate limiter assigns to it
// (which counts as one more failure of the item).
func (q *RateLimitingQueue[T]) AddRateLimited(item T) {
	if q.ShuttingDown() {
		return
	}
	q.metrics.Retried()
	q.AddAfter(item, q.limiter.When(item))
}

// Forget clears item's failure history in the rate limiter. It does not
// remove the item from the queue.
func (q *RateLimitingQueue[T]) Forget(item T) { q.limiter.Forget(item) }

// NumRequeues returns how many failures of item the rate limiter tracks.
func (q *RateLimitingQueue[T]) NumRequeues(item T) int { return q.limiter.NumRequeues(item) }
