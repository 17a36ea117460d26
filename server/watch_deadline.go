package server

import (
	"errors"
	"net/http"
	"os"
	"time"
)

// deadline is a watch's write deadline, SlowWatcherTimeout (timeout) long.
// While the watch writes, it stays between 0.9 and 1 times timeout ahead
// of every write, moved at most every timeout/10 (moving it costs a timer
// update, over HTTP/2 also a message to the connection's goroutine). While
// the watch waits for events it is lifted: over HTTP/2 a write deadline
// is a timer that resets the stream when it fires, written to or not, so
// a deadline left in place would end every watch idle for timeout.
type deadline struct {
	timeout time.Duration
	next    time.Time // when to move it again; zero while lifted
	at      time.Time // the deadline; zero while lifted
	// expire fires 3/4 of timeout after the deadline was last moved, before
	// the deadline itself; nil until the first write.
	expire *time.Timer
}

// extend moves the deadline timeout ahead, unless it moved within
// timeout/10.
func (d *deadline) extend(rc *http.ResponseController) {
	now := time.Now()
	if now.Before(d.next) {
		return
	}
	d.at = now.Add(d.timeout)
	_ = rc.SetWriteDeadline(d.at)
	d.next = now.Add(d.timeout / 10)
	if d.expire == nil {
		d.expire = time.NewTimer(d.timeout * 3 / 4)
	} else {
		d.expire.Reset(d.timeout * 3 / 4)
	}
}

// expiring returns a channel that receives when the deadline is near and
// should be lifted if nothing is being written; nil (never ready) before
// the first write.
func (d *deadline) expiring() <-chan time.Time {
	if d.expire == nil {
		return nil
	}
	return d.expire.C
}

// lift removes the deadline; the next write sets it again.
func (d *deadline) lift(rc *http.ResponseController) {
	_ = rc.SetWriteDeadline(time.Time{})
	d.next, d.at = time.Time{}, time.Time{}
}

// passed reports whether a write failing now failed for the deadline:
// over HTTP/2 a write whose frame still waits for the connection's
// goroutine when the deadline resets the stream fails with "stream
// closed", which does not say so.
func (d *deadline) passed(err error) bool {
	return errors.Is(err, os.ErrDeadlineExceeded) || (!d.at.IsZero() && !time.Now().Before(d.at))
}
