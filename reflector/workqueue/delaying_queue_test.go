package workqueue_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/reflector/workqueue"
	"github.com/listwatch/listwatch/reflector/workqueue/workqueuetest"
)

// Inside a synctest bubble time.Sleep advances the fake clock and
// synctest.Wait lets the queue's goroutine settle, so these tests are exact
// and take no real time.

func TestAddAfterWaitsForTheDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := workqueue.NewDelaying[string](workqueue.Config{})
		defer q.ShutDown()
		q.AddAfter("a", 10*time.Second)
		time.Sleep(10*time.Second - time.Nanosecond)
		synctest.Wait()
		assert.Equal(t, 0, q.Len(), "not due yet")
		assert.Equal(t, 1, q.Waiting())
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		assert.Equal(t, 1, q.Len(), "due")
		assert.Equal(t, 0, q.Waiting())
	})
}

func TestAddAfterKeepsTheEarliestDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := workqueue.NewDelaying[string](workqueue.Config{})
		defer q.ShutDown()
		q.AddAfter("a", 10*time.Second)
		q.AddAfter("a", 5*time.Second)  // earlier: wins
		q.AddAfter("a", 20*time.Second) // later: ignored
		assert.Equal(t, 1, q.Waiting(), "one entry per item")

		time.Sleep(5 * time.Second)
		synctest.Wait()
		require.Equal(t, 1, q.Len(), "released at the earliest deadline")
		q.Done(get[string](t, q))

		time.Sleep(time.Minute)
		synctest.Wait()
		assert.Equal(t, 0, q.Len(), "the later deadlines did not add it again")
	})
}

func TestAddAfterReleasesInDeadlineOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := workqueue.NewDelaying[string](workqueue.Config{})
		defer q.ShutDown()
		q.AddAfter("c", 3*time.Second)
		q.AddAfter("a", 1*time.Second)
		q.AddAfter("d", 4*time.Second)
		q.AddAfter("b", 2*time.Second)
		q.AddAfter("now", 0)
		require.Equal(t, 1, q.Len(), "a non-positive delay adds at once")

		start := time.Now()
		var got []string
		var at []time.Duration
		for range 5 {
			item := get[string](t, q)
			got = append(got, item)
			at = append(at, time.Since(start))
			q.Done(item)
		}
		assert.Equal(t, []string{"now", "a", "b", "c", "d"}, got)
		assert.Equal(t, []time.Duration{0, time.Second, 2 * time.Second, 3 * time.Second, 4 * time.Second}, at)
	})
}

func TestAddAfterAnEarlierItemWakesTheQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := workqueue.NewDelaying[string](workqueue.Config{})
		defer q.ShutDown()
		q.AddAfter("late", time.Hour)
		synctest.Wait() // the goroutine now sleeps until the hour is up
		start := time.Now()
		q.AddAfter("early", time.Second)
		assert.Equal(t, "early", get[string](t, q))
		assert.Equal(t, time.Second, time.Since(start))
	})
}

func TestDelayingShutDownDropsWaitingItems(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := workqueue.NewDelaying[string](workqueue.Config{})
		q.AddAfter("a", time.Second)
		q.ShutDown()
		assert.Equal(t, 0, q.Waiting())
		q.AddAfter("b", time.Second)
		q.AddAfter("c", 0)
		time.Sleep(time.Minute)
		assert.Equal(t, 0, q.Len(), "nothing is added after shutdown")
		_, shutdown := q.Get()
		assert.True(t, shutdown)
		// Returning from the bubble proves the queue's goroutine ended.
	})
}

func TestDelayingShutDownWithDrainStopsTheGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := workqueue.NewDelaying[string](workqueue.Config{})
		q.AddAfter("a", time.Second)
		q.ShutDownWithDrain()
		q.ShutDown() // a second shutdown is harmless
	})
}

// TestDelayingQueueOnFakeClock drives the Clock seam instead of synctest.
func TestDelayingQueueOnFakeClock(t *testing.T) {
	start := time.Unix(1_000_000, 0)
	clock := workqueuetest.NewFakeClock(start)
	q := workqueue.NewDelaying[string](workqueue.Config{Clock: clock})
	defer q.ShutDown()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()

	q.AddAfter("a", 10*time.Second)
	require.NoError(t, clock.WaitForTimer(ctx, start.Add(10*time.Second)), "the queue sleeps until the deadline")
	clock.Step(9 * time.Second)
	assert.Equal(t, 0, q.Len(), "not due yet (timer not fired)")

	clock.Step(time.Second)
	item, _ := q.Get() // blocks until the goroutine has moved it
	assert.Equal(t, "a", item)
	assert.Equal(t, 0, q.Waiting())
}
