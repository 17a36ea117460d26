package workqueue

import (
	"sync"
	"time"
)

// Config configures a queue. The zero value is ready to use.
type Config struct {
	// Clock is the time source for delays, rate limits and metrics.
	// Nil means the wall clock.
	Clock Clock
	// Metrics receives the queue's measurements. Nil records nothing.
	Metrics Metrics
}

// Queue is a work queue of comparable items with the dirty/processing
// discipline described in the package documentation. Create it with New;
// the zero value is not usable. All methods are safe for concurrent use.
//
// Invariants (mu held): every element of items is in dirty and not in
// processing; an item is in items at most once.
type Queue[T comparable] struct {
	clock   Clock
	metrics Metrics
	timed   bool // metrics were configured: keep per-item timestamps

	// stopHook, when set, is run once by the first ShutDown or
	// ShutDownWithDrain, without mu held (the delaying queue stops its
	// goroutine there).
	stopHook func()
	stopOnce sync.Once

	mu sync.Mutex
	// ready is signalled when an item is queued and broadcast on shutdown;
	// Get waits on it.
	ready sync.Cond
	// idle is broadcast when processing becomes empty or the drain is
	// cancelled; ShutDownWithDrain waits on it.
	idle sync.Cond

	items        []T             // FIFO of items waiting for Get: items[head:]
	head         int             // index in items of the next item Get hands out
	dirty        map[T]struct{}  // items that need processing (queued or not)
	processing   map[T]struct{}  // items handed out by Get and not yet Done
	queuedAt     map[T]time.Time // when each queued item entered items (timed only)
	startedAt    map[T]time.Time // when each processing item was handed out (timed only)
	shuttingDown bool            // Add is ignored, Get stops blocking
	draining     bool            // a ShutDownWithDrain is waiting for processing to empty
}

// New returns an empty Queue. It starts no goroutine.
func New[T comparable](cfg Config) *Queue[T] {
	return newQueue[T](cfg)
}

func newQueue[T comparable](cfg Config) *Queue[T] {
	q := &Queue[T]{
		clock:      orReal(cfg.Clock),
		metrics:    cfg.Metrics,
		timed:      cfg.Metrics != nil,
		dirty:      map[T]struct{}{},
		processing: map[T]struct{}{},
	}
	if q.metrics == nil {
		q.metrics = noMetrics{}
	}
	if q.timed {
		q.queuedAt = map[T]time.Time{}
		q.startedAt = map[T]time.Time{}
	}
	if pm, ok := cfg.Metrics.(ProgressMetrics); ok {
		pm.TrackProgress(q.inProgress)
	}
	q.ready.L = &q.mu
	q.idle.L = &q.mu
	return q
}

// inProgress returns how long the items being processed have been so, in
// total and for the longest-running one (ProgressMetrics).
func (q *Queue[T]) inProgress() (unfinished, longest time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.clock.Now()
	for _, started := range q.startedAt {
		d := now.Sub(started)
		unfinished += d
		longest = max(longest, d)
	}
	return unfinished, longest
}

// Add marks item as needing processing. It is a no-op when the item is
// already waiting or when the queue is shutting down. An item that is being
// processed is not handed out again until its Done; it is queued then.
func (q *Queue[T]) Add(item T) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.shuttingDown {
		return
	}
	if _, ok := q.dirty[item]; ok {
		return
	}
	q.dirty[item] = struct{}{}
	q.metrics.Added()
	if _, ok := q.processing[item]; ok {
		return
	}
	q.pushLocked(item)
}

// pushLocked appends item to the FIFO and wakes one Get.
func (q *Queue[T]) pushLocked(item T) {
	if q.head > 0 && q.head*2 >= len(q.items) && len(q.items) == cap(q.items) {
		// More than half of the array is consumed: slide the live part
		// down instead of letting append grow the array.
		n := copy(q.items, q.items[q.head:])
		clear(q.items[n:])
		q.items = q.items[:n]
		q.head = 0
	}
	q.items = append(q.items, item)
	if q.timed {
		q.queuedAt[item] = q.clock.Now()
	}
	q.metrics.Depth(len(q.items) - q.head)
	q.ready.Signal()
}

// Len returns the number of items waiting to be handed out by Get (items
// being processed, or dirty while processing, are not counted).
func (q *Queue[T]) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items) - q.head
}

// Get blocks until an item is available and returns it; the caller must call
// Done(item) when it has finished with it. After ShutDown, Get keeps
// returning the items still queued and then returns shutdown == true
// without blocking.
func (q *Queue[T]) Get() (item T, shutdown bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for q.head == len(q.items) && !q.shuttingDown {
		q.ready.Wait()
	}
	if q.head == len(q.items) {
		return item, true
	}
	item = q.items[q.head]
	var zero T
	q.items[q.head] = zero // drop the reference held by the array
	q.head++
	if q.head == len(q.items) { // drained: reuse the array from the start
		q.items = q.items[:0]
		q.head = 0
	}
	q.processing[item] = struct{}{}
	delete(q.dirty, item)
	q.metrics.Depth(len(q.items) - q.head)
	if q.timed {
		now := q.clock.Now()
		q.metrics.Latency(now.Sub(q.queuedAt[item]))
		delete(q.queuedAt, item)
		q.startedAt[item] = now
	}
	return item, false
}

// Done marks item as processed. If it was added again while being
// processed, it is queued now. Done for an item that is not being processed
// is a no-op.
func (q *Queue[T]) Done(item T) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if _, ok := q.processing[item]; !ok {
		return
	}
	delete(q.processing, item)
	if q.timed {
		q.metrics.WorkDuration(q.clock.Now().Sub(q.startedAt[item]))
		delete(q.startedAt, item)
	}
	if _, ok := q.dirty[item]; ok {
		q.pushLocked(item)
	} else if len(q.processing) == 0 {
		q.idle.Broadcast()
	}
}

// ShutDown makes the queue ignore new items and makes Get return
// shutdown == true once the queued items are handed out. It does not wait
// for items being processed; it also releases a pending ShutDownWithDrain.
// Delayed items that are still waiting are dropped.
func (q *Queue[T]) ShutDown() {
	q.mu.Lock()
	q.shuttingDown = true
	q.draining = false
	q.ready.Broadcast()
	q.idle.Broadcast()
	q.mu.Unlock()
	q.runStopHook()
}

// ShutDownWithDrain is ShutDown that then waits until no item is being
// processed, that is until every item handed out by Get has been Done. The
// workers must therefore keep calling Done; a concurrent ShutDown ends the
// wait early.
func (q *Queue[T]) ShutDownWithDrain() {
	q.mu.Lock()
	q.shuttingDown = true
	q.draining = true
	q.ready.Broadcast()
	q.mu.Unlock()
	q.runStopHook()

	q.mu.Lock()
	defer q.mu.Unlock()
	for q.draining && len(q.processing) > 0 {
		q.idle.Wait()
	}
}

// ShuttingDown reports whether ShutDown or ShutDownWithDrain was called.
func (q *Queue[T]) ShuttingDown() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.shuttingDown
}

func (q *Queue[T]) runStopHook() {
	q.stopOnce.Do(func() {
		if q.stopHook != nil {
			q.stopHook()
		}
	})
}
