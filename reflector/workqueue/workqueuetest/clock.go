// Package workqueuetest provides test helpers for code built on
// reflector/workqueue: a FakeClock whose time moves only when the test
// steps it.
package workqueuetest

import (
	"context"
	"sync"
	"time"

	"github.com/listwatch/listwatch/reflector/workqueue"
)

// FakeClock is a workqueue.Clock whose time only moves on Step or SetTime.
// Timers fire (without blocking) when the time reaches their deadline. It is
// safe for concurrent use.
type FakeClock struct {
	mu      sync.Mutex
	now     time.Time
	timers  map[*fakeTimer]struct{} // armed timers
	changed chan struct{}           // closed and replaced whenever timers change
}

var _ workqueue.Clock = (*FakeClock)(nil)

// NewFakeClock returns a FakeClock set to now.
func NewFakeClock(now time.Time) *FakeClock {
	return &FakeClock{now: now, timers: map[*fakeTimer]struct{}{}, changed: make(chan struct{})}
}

// Now implements workqueue.Clock.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// After implements workqueue.Clock.
func (c *FakeClock) After(d time.Duration) <-chan time.Time { return c.NewTimer(d).C() }

// NewTimer implements workqueue.Clock.
func (c *FakeClock) NewTimer(d time.Duration) workqueue.Timer {
	t := &fakeTimer{clock: c, ch: make(chan time.Time, 1)}
	t.Reset(d)
	return t
}

// Step moves the time forward by d and fires the timers that are due.
func (c *FakeClock) Step(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.setLocked(c.now.Add(d))
}

// SetTime sets the time (which may go backwards) and fires the timers that
// are due.
func (c *FakeClock) SetTime(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.setLocked(now)
}

func (c *FakeClock) setLocked(now time.Time) {
	c.now = now
	for t := range c.timers {
		if !t.deadline.After(now) {
			delete(c.timers, t)
			select {
			case t.ch <- now:
			default:
			}
		}
	}
	c.notifyLocked()
}

// Timers returns the number of armed timers.
func (c *FakeClock) Timers() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}

// WaitForTimer blocks until a timer is armed with a deadline at or before
// deadline, or ctx ends (then it returns ctx's error). Use it to know that
// the code under test is sleeping before stepping the clock.
func (c *FakeClock) WaitForTimer(ctx context.Context, deadline time.Time) error {
	for {
		c.mu.Lock()
		changed := c.changed
		for t := range c.timers {
			if !t.deadline.After(deadline) {
				c.mu.Unlock()
				return nil
			}
		}
		c.mu.Unlock()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		}
	}
}

func (c *FakeClock) notifyLocked() {
	close(c.changed)
	c.changed = make(chan struct{})
}

// fakeTimer is a FakeClock timer. Like a Go 1.23 *time.Timer, Stop and Reset
// discard a value that was sent but not yet received.
type fakeTimer struct {
	clock    *FakeClock
	ch       chan time.Time // cap 1
	deadline time.Time      // guarded by clock.mu
}

func (t *fakeTimer) C() <-chan time.Time { return t.ch }

func (t *fakeTimer) Stop() bool {
	c := t.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	_, armed := c.timers[t]
	delete(c.timers, t)
	t.drain()
	c.notifyLocked()
	return armed
}

func (t *fakeTimer) Reset(d time.Duration) bool {
	c := t.clock
	c.mu.Lock()
	defer c.mu.Unlock()
	_, armed := c.timers[t]
	t.drain()
	t.deadline = c.now.Add(d)
	if d <= 0 {
		delete(c.timers, t)
		t.ch <- c.now
	} else {
		c.timers[t] = struct{}{}
	}
	c.notifyLocked()
	return armed
}

func (t *fakeTimer) drain() {
	select {
	case <-t.ch:
	default:
	}
}
