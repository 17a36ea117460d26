package workqueue

import (
	"sync"
	"time"
)

// DelayingQueue is a Queue with AddAfter. It owns one goroutine, started by
// NewDelaying and stopped (and waited for) by ShutDown or
// ShutDownWithDrain; always shut the queue down. Items still waiting at
// shutdown are dropped.
type DelayingQueue[T comparable] struct {
	*Queue[T]

	waitMu  sync.Mutex    // guards waiting (never held with Queue.mu)
	waiting *waitHeap[T]  // items not yet due, earliest first
	wake    chan struct{} // cap 1; poked when the earliest deadline moves earlier
	stop    chan struct{} // closed by the stop hook; ends loop
	done    chan struct{} // closed by loop when it returns
}

// NewDelaying returns an empty DelayingQueue and starts its goroutine.
func NewDelaying[T comparable](cfg Config) *DelayingQueue[T] {
	q := &DelayingQueue[T]{
		Queue:   newQueue[T](cfg),
		waiting: newWaitHeap[T](),
		wake:    make(chan struct{}, 1),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	q.Queue.stopHook = q.stopLoop
	go q.loop()
	return q
}

// AddAfter adds item once d has elapsed (at once when d <= 0). If the item
// is already waiting, the earlier of the two deadlines is kept. It is a
// no-op when the queue is shutting down.
func (q *DelayingQueue[T]) AddAfter(item T, d time.Duration) {
	if q.ShuttingDown() {
		return
	}
	if d <= 0 {
		q.Add(item)
		return
	}
	readyAt := q.clock.Now().Add(d)
	q.waitMu.Lock()
	earliest := q.waiting.insert(item, readyAt)
	q.waitMu.Unlock()
	if earliest {
		select {
		case q.wake <- struct{}{}:
		default: // a wake-up is already pending
		}
	}
}

// Waiting returns the number of items waiting for their deadline.
func (q *DelayingQueue[T]) Waiting() int {
	q.waitMu.Lock()
	defer q.waitMu.Unlock()
	return q.waiting.len()
}

// loop moves due items into the queue and sleeps until the next deadline,
// a wake-up from AddAfter, or stop.
func (q *DelayingQueue[T]) loop() {
	defer close(q.done)
	var (
		timer Timer
		ready []T // reused between rounds; owned by this goroutine
	)
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		var next time.Time
		var pending bool
		q.waitMu.Lock()
		ready, next, pending = q.waiting.popReady(q.clock.Now(), ready[:0])
		q.waitMu.Unlock()
		for i, item := range ready {
			q.Add(item)
			var zero T
			ready[i] = zero
		}

		var fire <-chan time.Time
		if pending {
			d := next.Sub(q.clock.Now())
			if timer == nil {
				timer = q.clock.NewTimer(d)
			} else {
				timer.Reset(d)
			}
			fire = timer.C()
		}
		select {
		case <-q.stop:
			return
		case <-q.wake:
		case <-fire:
		}
	}
}

// stopLoop ends loop, waits for it, and drops the waiting items.
func (q *DelayingQueue[T]) stopLoop() {
	close(q.stop)
	<-q.done
	q.waitMu.Lock()
	q.waiting.clear()
	q.waitMu.Unlock()
}
