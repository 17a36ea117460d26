package workqueue

import (
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// RateLimiter decides how long an item must wait before it is retried.
// Implementations must be safe for concurrent use.
type RateLimiter[T comparable] interface {
	// When records one more failure of item and returns how long to wait
	// before retrying it.
	When(item T) time.Duration
	// Forget clears item's failure history (call it after a success).
	Forget(item T)
	// NumRequeues returns how many failures of item are being tracked.
	NumRequeues(item T) int
}

// ItemExponentialFailureRateLimiter waits Base·2^failures for an item,
// capped at Max; Forget resets the item to Base.
type ItemExponentialFailureRateLimiter[T comparable] struct {
	base, max time.Duration

	mu       sync.Mutex
	failures map[T]int
}

// NewItemExponentialFailureRateLimiter returns a per-item exponential
// limiter: the n-th consecutive failure (from 0) waits base·2^n, at most max.
func NewItemExponentialFailureRateLimiter[T comparable](base, max time.Duration) *ItemExponentialFailureRateLimiter[T] {
	return &ItemExponentialFailureRateLimiter[T]{base: base, max: max, failures: map[T]int{}}
}

// When implements RateLimiter.
func (r *ItemExponentialFailureRateLimiter[T]) When(item T) time.Duration {
	r.mu.Lock()
	n := r.failures[item]
	r.failures[item] = n + 1
	r.mu.Unlock()

	// Float arithmetic so that a long failure streak saturates at max
	// instead of overflowing.
	d := float64(r.base) * math.Pow(2, float64(n))
	if d > float64(r.max) {
		return r.max
	}
	return time.Duration(d)
}

// Forget implements RateLimiter.
func (r *ItemExponentialFailureRateLimiter[T]) Forget(item T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.failures, item)
}

// NumRequeues implements RateLimiter.
func (r *ItemExponentialFailureRateLimiter[T]) NumRequeues(item T) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failures[item]
}

// BucketRateLimiter is an overall token bucket shared by all items: every
// When takes a token, and waits for it when the bucket is empty. It keeps
// no per-item state, so Forget does nothing and NumRequeues is 0.
type BucketRateLimiter[T comparable] struct {
	limiter *rate.Limiter
	clock   Clock
}

// NewBucketRateLimiter wraps limiter (its burst must be at least 1). clock
// nil means the wall clock.
func NewBucketRateLimiter[T comparable](limiter *rate.Limiter, clock Clock) *BucketRateLimiter[T] {
	return &BucketRateLimiter[T]{limiter: limiter, clock: orReal(clock)}
}

// When implements RateLimiter.
func (r *BucketRateLimiter[T]) When(T) time.Duration {
	now := r.clock.Now()
	res := r.limiter.ReserveN(now, 1)
	if !res.OK() { // burst 0: the limiter can never grant a token
		return 0
	}
	return res.DelayFrom(now)
}

// Forget implements RateLimiter; the bucket has no per-item state.
func (r *BucketRateLimiter[T]) Forget(T) {}

// NumRequeues implements RateLimiter; the bucket has no per-item state.
func (r *BucketRateLimiter[T]) NumRequeues(T) int { return 0 }

// MaxOfRateLimiter combines limiters: When asks every one of them (so each
// records the failure) and returns the longest wait; NumRequeues is the
// largest count; Forget forgets in all.
type MaxOfRateLimiter[T comparable] struct {
	limiters []RateLimiter[T]
}

// NewMaxOfRateLimiter returns the combination of limiters.
func NewMaxOfRateLimiter[T comparable](limiters ...RateLimiter[T]) *MaxOfRateLimiter[T] {
	return &MaxOfRateLimiter[T]{limiters: limiters}
}

// When implements RateLimiter.
func (r *MaxOfRateLimiter[T]) When(item T) time.Duration {
	var longest time.Duration
	for _, l := range r.limiters {
		longest = max(longest, l.When(item))
	}
	return longest
}

// Forget implements RateLimiter.
func (r *MaxOfRateLimiter[T]) Forget(item T) {
	for _, l := range r.limiters {
		l.Forget(item)
	}
}

// NumRequeues implements RateLimiter.
func (r *MaxOfRateLimiter[T]) NumRequeues(item T) int {
	var n int
	for _, l := range r.limiters {
		n = max(n, l.NumRequeues(item))
	}
	return n
}

// Defaults of DefaultControllerRateLimiter (the values client-go uses).
const (
	DefaultBaseDelay = 5 * time.Millisecond
	DefaultMaxDelay  = 1000 * time.Second
	DefaultQPS       = 10
	DefaultBurst     = 100
)

// DefaultControllerRateLimiter is the maximum of a per-item exponential
// backoff (DefaultBaseDelay doubling up to DefaultMaxDelay) and an overall
// token bucket (DefaultQPS, DefaultBurst). clock nil means the wall clock.
func DefaultControllerRateLimiter[T comparable](clock Clock) RateLimiter[T] {
	return NewMaxOfRateLimiter(
		NewItemExponentialFailureRateLimiter[T](DefaultBaseDelay, DefaultMaxDelay),
		NewBucketRateLimiter[T](rate.NewLimiter(rate.Limit(DefaultQPS), DefaultBurst), clock),
	)
}
