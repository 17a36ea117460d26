package watchcache

import (
	"sort"
	"time"
)

// ring is the cyclic buffer of recent events, oldest first. Its capacity
// doubles (up to max) when it is full and its oldest event is still inside
// the window, and halves (down to min) when it is full and most of it is
// older than the window. Not safe for concurrent use: Cache guards it.
type ring struct {
	buf      []*Event
	start, n int
	min, max int
	window   time.Duration
}

func newRing(min, max int, window time.Duration) *ring {
	return &ring{buf: make([]*Event, min), min: min, max: max, window: window}
}

func (r *ring) at(i int) *Event { return r.buf[(r.start+i)%len(r.buf)] }

// push appends e and returns the events evicted to make room, oldest first.
func (r *ring) push(e *Event, now time.Time) []*Event {
	var evicted []*Event
	if r.n == len(r.buf) {
		switch {
		case len(r.buf) < r.max && now.Sub(r.at(0).Time) < r.window:
			r.resize(min(2*len(r.buf), r.max))
		case len(r.buf) > r.min && now.Sub(r.at(r.n-len(r.buf)/4).Time) >= r.window:
			evicted = r.dropOldest(r.n - len(r.buf)/2)
			r.resize(max(len(r.buf)/2, r.min))
		}
	}
	if r.n == len(r.buf) {
		evicted = append(evicted, r.dropOldest(1)...)
	}
	r.buf[(r.start+r.n)%len(r.buf)] = e
	r.n++
	return evicted
}

func (r *ring) dropOldest(k int) []*Event {
	out := make([]*Event, 0, k)
	for range k {
		out = append(out, r.buf[r.start])
		r.buf[r.start] = nil
		r.start = (r.start + 1) % len(r.buf)
		r.n--
	}
	return out
}

func (r *ring) resize(capacity int) {
	nb := make([]*Event, capacity)
	for i := range r.n {
		nb[i] = r.at(i)
	}
	r.buf, r.start = nb, 0
}

// reset drops every event, keeping the capacity.
func (r *ring) reset() {
	clear(r.buf)
	r.start, r.n = 0, 0
}

// firstAfter returns the index of the first event with RV > rv (r.n if none).
func (r *ring) firstAfter(rv uint64) int {
	return sort.Search(r.n, func(i int) bool { return r.at(i).RV > rv })
}

// capacity returns the current capacity.
func (r *ring) capacity() int { return len(r.buf) }
