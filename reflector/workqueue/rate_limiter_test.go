package workqueue_test

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"golang.org/x/time/rate"

	"github.com/listwatch/listwatch/reflector/workqueue"
	"github.com/listwatch/listwatch/reflector/workqueue/workqueuetest"
)

func TestItemExponentialFailureRateLimiter(t *testing.T) {
	r := workqueue.NewItemExponentialFailureRateLimiter[string](time.Millisecond, 10*time.Millisecond)
	var got []time.Duration
	for range 6 {
		got = append(got, r.When("a"))
	}
	assert.Equal(t, []time.Duration{1, 2, 4, 8, 10, 10}, scale(got, time.Millisecond), "doubles, capped at max")
	assert.Equal(t, 6, r.NumRequeues("a"))
	assert.Equal(t, time.Millisecond, r.When("b"), "items back off independently")

	r.Forget("a")
	assert.Equal(t, 0, r.NumRequeues("a"))
	assert.Equal(t, time.Millisecond, r.When("a"), "Forget resets to the base delay")
	assert.Equal(t, 1, r.NumRequeues("b"), "Forget touches only its item")
}

func TestItemExponentialFailureRateLimiterSaturates(t *testing.T) {
	r := workqueue.NewItemExponentialFailureRateLimiter[int](time.Millisecond, time.Hour)
	for range 200 {
		r.When(1)
	}
	assert.Equal(t, time.Hour, r.When(1), "a long streak stays at max instead of overflowing")
}

func TestBucketRateLimiterOnFakeClock(t *testing.T) {
	clock := workqueuetest.NewFakeClock(time.Unix(0, 0))
	r := workqueue.NewBucketRateLimiter[string](rate.NewLimiter(1, 2), clock)
	var got []time.Duration
	for _, item := range []string{"a", "b", "c", "d"} {
		got = append(got, r.When(item))
	}
	assert.Equal(t, []time.Duration{0, 0, time.Second, 2 * time.Second}, got,
		"the burst is free, then one token per second for everyone")
	assert.Equal(t, 0, r.NumRequeues("a"), "the bucket keeps no per-item state")

	clock.Step(10 * time.Second)
	assert.Equal(t, time.Duration(0), r.When("e"), "the bucket refills over time")
}

// TestMaxOfTokenBucketVersusPerItem shows the two limiters of the default
// combination at work: one failing item is paced by its own exponential
// backoff, while many distinct items are paced by the shared bucket.
func TestMaxOfTokenBucketVersusPerItem(t *testing.T) {
	clock := workqueuetest.NewFakeClock(time.Unix(0, 0))
	r := workqueue.NewMaxOfRateLimiter(
		workqueue.NewItemExponentialFailureRateLimiter[int](time.Millisecond, time.Second),
		workqueue.NewBucketRateLimiter[int](rate.NewLimiter(10, 3), clock),
	)

	// Distinct items, each failing once: the exponential part says 1ms
	// each, the bucket lets 3 through and then spaces them 100ms apart.
	var distinct []time.Duration
	for item := range 5 {
		distinct = append(distinct, r.When(item))
	}
	assert.Equal(t, []time.Duration{1, 1, 1, 100, 200}, scale(distinct, time.Millisecond))

	// Once the bucket has refilled, one item failing repeatedly follows its
	// own backoff (the bucket grants its first tokens for free).
	clock.Step(time.Minute)
	var single []time.Duration
	for range 3 {
		single = append(single, r.When(100))
	}
	assert.Equal(t, []time.Duration{1, 2, 4}, scale(single, time.Millisecond))
	assert.Equal(t, 3, r.NumRequeues(100), "the largest count of the parts")

	r.Forget(100)
	assert.Equal(t, 0, r.NumRequeues(100))
	assert.Equal(t, 100*time.Millisecond, r.When(101),
		"the burst was spent on item 100: another item waits for the bucket")
	clock.Step(time.Minute)
	assert.Equal(t, time.Millisecond, r.When(100), "Forget reset the item to the base delay")
}

func TestDefaultControllerRateLimiter(t *testing.T) {
	clock := workqueuetest.NewFakeClock(time.Unix(0, 0))
	r := workqueue.DefaultControllerRateLimiter[int](clock)
	assert.Equal(t, workqueue.DefaultBaseDelay, r.When(-1), "first failure: the base delay")
	for item := range workqueue.DefaultBurst - 1 {
		r.When(item)
	}
	assert.Equal(t, time.Second/workqueue.DefaultQPS, r.When(1000),
		"after the burst the bucket spaces retries at 1/QPS")
}

func TestRateLimitingQueueBacksOffAndForgets(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := workqueue.NewRateLimiting[string](
			workqueue.NewItemExponentialFailureRateLimiter[string](time.Second, time.Minute),
			workqueue.Config{})
		defer q.ShutDown()

		var waits []time.Duration
		for range 4 {
			start := time.Now()
			q.AddRateLimited("a")
			q.Done(get[string](t, q))
			waits = append(waits, time.Since(start))
		}
		assert.Equal(t, []time.Duration{1, 2, 4, 8}, scale(waits, time.Second))
		assert.Equal(t, 4, q.NumRequeues("a"))

		q.Forget("a")
		start := time.Now()
		q.AddRateLimited("a")
		q.Done(get[string](t, q))
		assert.Equal(t, time.Second, time.Since(start), "Forget resets the backoff")
	})
}

func scale(ds []time.Duration, unit time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d / unit
	}
	return out
}
