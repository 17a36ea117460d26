package server

import (
	"net/http"
	"sync"
	"time"
)

// watchdog ends a watch whose client takes nothing for timeout
// (SlowWatcherTimeout) while a write waits for it. It is armed while the
// watch writes, moved on as lines are taken (at most every timeout/10),
// and disarmed once a batch is flushed; when it fires it sets the
// connection's write deadline in the past, which fails the write that
// waits (over HTTP/2, resets the stream). No write deadline is set
// otherwise: writing an event costs two timer updates, not a message to
// an HTTP/2 connection's goroutine per deadline, and an idle watch has no
// deadline that could fire (an HTTP/2 deadline resets its stream when it
// passes, written to or not).
type watchdog struct {
	timeout time.Duration
	rc      *http.ResponseController
	next    time.Time   // when to move it on again; zero while disarmed
	timer   *time.Timer // nil until the first write

	mu    sync.Mutex
	fired bool // guarded by mu
	done  bool // guarded by mu: the watch has ended, rc is no longer its
}

// arm starts the timeout, or moves it on unless it moved within
// timeout/10.
func (d *watchdog) arm() {
	now := time.Now()
	if now.Before(d.next) {
		return
	}
	d.next = now.Add(d.timeout / 10)
	if d.timer == nil {
		d.timer = time.AfterFunc(d.timeout, d.fire)
		return
	}
	d.timer.Reset(d.timeout)
}

// disarm stops the timeout: nothing waits for the client.
func (d *watchdog) disarm() {
	if d.timer != nil {
		d.timer.Stop()
	}
	d.next = time.Time{}
}

func (d *watchdog) fire() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.done {
		return
	}
	d.fired = true
	_ = d.rc.SetWriteDeadline(time.Now().Add(-time.Second))
}

// stop ends the watchdog for good, before the request's response is
// finished, and reports whether it fired.
func (d *watchdog) stop() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.done = true
	if d.timer != nil {
		d.timer.Stop()
	}
	return d.fired
}
