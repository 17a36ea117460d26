package hub

import (
	"sync"

	"github.com/listwatch/listwatch/watchcache"
)

// queue is a watcher's bounded queue of live events. The dispatcher
// pushes without blocking; the watcher's goroutine takes everything queued
// at once, so a burst costs one wake-up rather than one per event.
type queue struct {
	mu  sync.Mutex          // taken by dispatch (push, Hub.mu held) and the watcher's goroutine (takeAll)
	buf []*watchcache.Event // guarded by mu
	max int
	// ready holds a token while buf may be non-empty; the dispatcher
	// deposits it, the watcher's goroutine consumes it. Never closed.
	ready chan struct{}
}

func newQueue(max int) *queue {
	return &queue{max: max, ready: make(chan struct{}, 1)}
}

// push queues ev; false means the queue is full.
func (q *queue) push(ev *watchcache.Event) bool {
	q.mu.Lock()
	if len(q.buf) >= q.max {
		q.mu.Unlock()
		return false
	}
	q.buf = append(q.buf, ev)
	q.mu.Unlock()
	q.signal()
	return true
}

// signal deposits the ready token unless one is there already.
func (q *queue) signal() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// takeAll moves every queued event into dst (reset first) and returns it.
func (q *queue) takeAll(dst []*watchcache.Event) []*watchcache.Event {
	q.mu.Lock()
	dst = append(dst[:0], q.buf...)
	clear(q.buf)
	q.buf = q.buf[:0]
	q.mu.Unlock()
	return dst
}

// empty reports whether nothing is queued.
func (q *queue) empty() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.buf) == 0
}
