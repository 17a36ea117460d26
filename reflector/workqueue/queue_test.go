package workqueue_test

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/reflector/workqueue"
	"github.com/listwatch/listwatch/reflector/workqueue/workqueuetest"
)

// get is Get that fails the test on shutdown.
func get[T comparable](t *testing.T, q interface{ Get() (T, bool) }) T {
	t.Helper()
	item, shutdown := q.Get()
	require.False(t, shutdown, "queue unexpectedly shut down")
	return item
}

func TestQueueFIFOAndDedup(t *testing.T) {
	q := workqueue.New[string](workqueue.Config{})
	defer q.ShutDown()
	for _, item := range []string{"a", "b", "a", "c", "b"} {
		q.Add(item)
	}
	require.Equal(t, 3, q.Len(), "duplicates of waiting items are dropped")
	for _, want := range []string{"a", "b", "c"} {
		got := get[string](t, q)
		assert.Equal(t, want, got, "items come out in the order they were first added")
		q.Done(got)
	}
	assert.Equal(t, 0, q.Len())
}

func TestQueueAddDuringProcessingIsRequeuedOnDone(t *testing.T) {
	q := workqueue.New[string](workqueue.Config{})
	defer q.ShutDown()
	q.Add("a")
	item := get[string](t, q)
	q.Add("a")
	q.Add("a")
	assert.Equal(t, 0, q.Len(), "an item being processed is not handed out again before Done")
	q.Done(item)
	require.Equal(t, 1, q.Len(), "the change made during processing is queued once on Done")
	item = get[string](t, q)
	q.Done(item)
	assert.Equal(t, 0, q.Len(), "exactly one extra round")
}

func TestQueueDoneOfUnknownItemIsNoop(t *testing.T) {
	q := workqueue.New[string](workqueue.Config{})
	defer q.ShutDown()
	q.Add("a")
	q.Done("a") // queued, not processing
	q.Done("zzz")
	assert.Equal(t, 1, q.Len())
	assert.Equal(t, "a", get[string](t, q))
}

func TestQueueGetBlocksUntilAdd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := workqueue.New[int](workqueue.Config{})
		defer q.ShutDown()
		got := make(chan int, 1)
		go func() {
			item, _ := q.Get()
			got <- item
		}()
		synctest.Wait()
		select {
		case <-got:
			t.Fatal("Get returned from an empty queue")
		default:
		}
		q.Add(7)
		assert.Equal(t, 7, <-got)
	})
}

func TestQueueShutDown(t *testing.T) {
	q := workqueue.New[string](workqueue.Config{})
	q.Add("a")
	q.Add("b")
	q.ShutDown()
	assert.True(t, q.ShuttingDown())
	q.Add("c")
	assert.Equal(t, 2, q.Len(), "Add after ShutDown is ignored")
	assert.Equal(t, "a", get[string](t, q), "queued items are still handed out")
	assert.Equal(t, "b", get[string](t, q))
	_, shutdown := q.Get()
	assert.True(t, shutdown, "an empty queue reports shutdown without blocking")
}

func TestQueueShutDownWakesBlockedGetters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := workqueue.New[string](workqueue.Config{})
		var wg sync.WaitGroup
		var shutdowns atomic.Int32
		for range 3 {
			wg.Go(func() {
				if _, shutdown := q.Get(); shutdown {
					shutdowns.Add(1)
				}
			})
		}
		synctest.Wait()
		q.ShutDown()
		wg.Wait()
		assert.Equal(t, int32(3), shutdowns.Load())
	})
}

func TestQueueShutDownWithDrainWaitsForInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := workqueue.New[string](workqueue.Config{})
		q.Add("a")
		q.Add("b")
		a := get[string](t, q)
		b := get[string](t, q)

		var drained atomic.Bool
		go func() {
			q.ShutDownWithDrain()
			drained.Store(true)
		}()
		synctest.Wait()
		require.False(t, drained.Load(), "drain returned with two items in flight")
		require.True(t, q.ShuttingDown())

		q.Done(a)
		synctest.Wait()
		require.False(t, drained.Load(), "drain returned with one item in flight")

		q.Done(b)
		synctest.Wait()
		assert.True(t, drained.Load(), "drain returns once every item is Done")
	})
}

func TestQueueShutDownReleasesDrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := workqueue.New[string](workqueue.Config{})
		q.Add("a")
		a := get[string](t, q)
		done := make(chan struct{})
		go func() {
			q.ShutDownWithDrain()
			close(done)
		}()
		synctest.Wait()
		q.ShutDown()
		<-done // would deadlock the bubble (and fail) if ShutDown did not release it
		q.Done(a)
	})
}

func TestQueueShutDownWithDrainIdleReturnsAtOnce(t *testing.T) {
	q := workqueue.New[string](workqueue.Config{})
	q.ShutDownWithDrain()
	assert.True(t, q.ShuttingDown())
}

// TestQueueNeverProcessesAnItemConcurrently hammers a queue with producers
// and workers and checks the two invariants: no item is processed by two
// workers at once, and the last Add of every item is followed by a
// processing round that started after it.
func TestQueueNeverProcessesAnItemConcurrently(t *testing.T) {
	const (
		items     = 16
		producers = 4
		workers   = 8
		addsEach  = 2000
	)
	q := workqueue.New[int](workqueue.Config{})
	var inFlight [items]atomic.Int32
	var lastAdd, lastStart [items]atomic.Int64 // sequence numbers
	var seq atomic.Int64
	var violations atomic.Int32

	var workersWG sync.WaitGroup
	for range workers {
		workersWG.Go(func() {
			for {
				item, shutdown := q.Get()
				if shutdown {
					return
				}
				if inFlight[item].Add(1) != 1 {
					violations.Add(1)
				}
				lastStart[item].Store(seq.Add(1))
				for range 3 { // let other goroutines run inside the window
					runtime.Gosched()
				}
				inFlight[item].Add(-1)
				q.Done(item)
			}
		})
	}
	var producersWG sync.WaitGroup
	for p := range producers {
		producersWG.Go(func() {
			for i := range addsEach {
				item := (i*7 + p) % items
				lastAdd[item].Store(seq.Add(1))
				q.Add(item)
				runtime.Gosched() // spread the adds over the processing
			}
		})
	}
	producersWG.Wait()
	q.ShutDownWithDrain()
	workersWG.Wait()

	assert.Zero(t, violations.Load(), "an item was processed by two workers at once")
	for i := range items {
		assert.Greater(t, lastStart[i].Load(), lastAdd[i].Load(),
			"item %d: its last Add was not followed by a processing round", i)
	}
}

// recordingMetrics counts what the queue reports.
type recordingMetrics struct {
	mu                      sync.Mutex
	adds, retries, maxDepth int
	depth                   int
	latencies, durations    []time.Duration
}

func (m *recordingMetrics) Added()   { m.mu.Lock(); m.adds++; m.mu.Unlock() }
func (m *recordingMetrics) Retried() { m.mu.Lock(); m.retries++; m.mu.Unlock() }
func (m *recordingMetrics) Depth(n int) {
	m.mu.Lock()
	m.depth = n
	m.maxDepth = max(m.maxDepth, n)
	m.mu.Unlock()
}
func (m *recordingMetrics) Latency(d time.Duration) {
	m.mu.Lock()
	m.latencies = append(m.latencies, d)
	m.mu.Unlock()
}
func (m *recordingMetrics) WorkDuration(d time.Duration) {
	m.mu.Lock()
	m.durations = append(m.durations, d)
	m.mu.Unlock()
}

func TestQueueMetrics(t *testing.T) {
	clock := workqueuetest.NewFakeClock(time.Unix(1000, 0))
	m := &recordingMetrics{}
	q := workqueue.NewRateLimiting[string](
		workqueue.NewItemExponentialFailureRateLimiter[string](0, 0),
		workqueue.Config{Clock: clock, Metrics: m})
	defer q.ShutDown()

	q.Add("a")
	q.Add("a") // de-duplicated: not an add
	q.Add("b")
	clock.Step(3 * time.Second)
	a := get[string](t, q)
	clock.Step(2 * time.Second)
	q.Done(a)
	q.AddRateLimited("a") // delay 0: straight back in

	m.mu.Lock()
	defer m.mu.Unlock()
	assert.Equal(t, 3, m.adds)
	assert.Equal(t, 1, m.retries)
	assert.Equal(t, 2, m.maxDepth)
	assert.Equal(t, 2, m.depth, "b and a are queued")
	assert.Equal(t, []time.Duration{3 * time.Second}, m.latencies)
	assert.Equal(t, []time.Duration{2 * time.Second}, m.durations)
}

func TestQueueKeepsOrderWhileNeverDraining(t *testing.T) {
	q := workqueue.New[int](workqueue.Config{})
	defer q.ShutDown()
	next := 0
	for ; next < 10; next++ {
		q.Add(next)
	}
	for want := range 5000 { // the FIFO's array is compacted many times over
		got := get[int](t, q)
		require.Equal(t, want, got)
		q.Done(got)
		q.Add(next)
		next++
	}
	assert.Equal(t, 10, q.Len())
}
