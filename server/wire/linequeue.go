package wire

import "sync"

// LineQueue is an HTTP watch's queue of encoded events, from its reader
// goroutine to its writer, bounded at max lines. Its storage grows as
// lines queue up and is dropped after a large burst, so that an idle
// watch holds no buffer (a channel of max lines would hold one of max
// slots from the start: 24 KiB at the default size).
type LineQueue struct {
	mu     sync.Mutex
	lines  [][]byte // guarded by mu
	closed bool     // guarded by mu: the reader is done
	max    int
	// ready holds a token while lines may be queued or the queue was
	// closed; freed holds one after the writer took lines. Never closed.
	ready, freed chan struct{}
}

// keptCapacity is the most line slots a queue keeps once emptied.
const keptCapacity = 64

// NewLineQueue returns an empty queue bounded at max lines.
func NewLineQueue(max int) *LineQueue {
	return &LineQueue{max: max, ready: make(chan struct{}, 1), freed: make(chan struct{}, 1)}
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// TryPush queues line unless max lines are queued.
func (q *LineQueue) TryPush(line []byte) bool {
	q.mu.Lock()
	if len(q.lines) >= q.max {
		q.mu.Unlock()
		return false
	}
	q.lines = append(q.lines, line)
	q.mu.Unlock()
	signal(q.ready)
	return true
}

// Close tells the writer that nothing follows what is queued.
func (q *LineQueue) Close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	signal(q.ready)
}

// Take moves the queued lines into dst (reset first); closed reports that
// nothing follows them.
func (q *LineQueue) Take(dst [][]byte) (lines [][]byte, closed bool) {
	q.mu.Lock()
	dst = append(dst[:0], q.lines...)
	clear(q.lines)
	q.lines = q.lines[:0]
	if cap(q.lines) > keptCapacity {
		q.lines = nil
	}
	closed = q.closed
	q.mu.Unlock()
	if len(dst) > 0 {
		signal(q.freed)
	}
	return dst, closed
}

// Ready returns a channel that holds a token while lines may be queued or
// the queue was closed: the writer waits on it, then calls Take.
func (q *LineQueue) Ready() <-chan struct{} { return q.ready }

// Freed returns a channel that holds a token after the writer took lines:
// a reader whose TryPush failed waits on it to try again.
func (q *LineQueue) Freed() <-chan struct{} { return q.freed }
