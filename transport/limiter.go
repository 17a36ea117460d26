package transport

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"
)

// ErrThrottled is what a *ThrottleError is (errors.Is): the client-side
// rate limit would have held a request past its context's deadline.
var ErrThrottled = errors.New("client-side rate limit")

// ThrottleError is returned, without waiting, for a request whose token
// would come after its context's deadline. errors.Is(err, ErrThrottled)
// and errors.Is(err, context.DeadlineExceeded) hold.
type ThrottleError struct {
	// Method and URL name the request.
	Method, URL string
	// Wait is how long the request would have waited for its token; Left
	// is the time its deadline left.
	Wait, Left time.Duration
}

func (e *ThrottleError) Error() string {
	return fmt.Sprintf("%s %s: client-side rate limit: the request would wait %v for its turn, its deadline is in %v",
		e.Method, e.URL, e.Wait.Round(time.Millisecond), e.Left.Round(time.Millisecond))
}

// Is reports ErrThrottled and context.DeadlineExceeded.
func (e *ThrottleError) Is(target error) bool {
	return target == ErrThrottled || target == context.DeadlineExceeded
}

// wait takes one token for req, waiting for it unless that would outlast
// req's deadline; retry says why the request is sent again ("" the first
// time), for the log.
func (t *Transport) wait(req *http.Request, retry string) error {
	if t.limiter == nil {
		return nil
	}
	ctx := req.Context()
	if err := ctx.Err(); err != nil {
		return err
	}
	now := t.clock.Now()
	r := t.limiter.ReserveN(now, 1)
	if !r.OK() {
		return errNoToken
	}
	d := r.DelayFrom(now)
	if d <= 0 {
		t.metrics.observeWait(req, 0)
		return nil
	}
	if dl, ok := ctx.Deadline(); ok && now.Add(d).After(dl) {
		r.CancelAt(now)
		t.metrics.throttled(req)
		return &ThrottleError{Method: req.Method, URL: req.URL.Redacted(), Wait: d, Left: dl.Sub(now)}
	}
	tm := t.clock.NewTimer(d)
	defer tm.Stop()
	select {
	case <-ctx.Done():
		r.CancelAt(t.clock.Now())
		return ctx.Err()
	case <-tm.C():
	}
	t.metrics.observeWait(req, d)
	t.logWait(req, d, retry)
	return nil
}

// logWait logs a wait longer than LongWait: at Debug level, or at Info
// level past LongWaitWarn when none was logged in the last
// LongWaitLogEvery.
func (t *Transport) logWait(req *http.Request, d time.Duration, retry string) {
	if d <= LongWait {
		return
	}
	reason := "client-side throttling"
	if retry != "" {
		reason += " of a request sent again after " + retry
	}
	level := slog.LevelDebug
	if d > LongWaitWarn {
		t.mu.Lock()
		if now := t.clock.Now(); now.Sub(t.lastLog) >= LongWaitLogEvery {
			t.lastLog, level = now, slog.LevelInfo
		}
		t.mu.Unlock()
	}
	t.log.Log(req.Context(), level, "waited before sending request",
		"delay", d, "reason", reason, "method", req.Method, "url", req.URL.Redacted())
}
