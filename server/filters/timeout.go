package filters

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/listwatch/listwatch/server/request"
)

// IsLongRunning reports whether req is a watch (GET with watch=true, on a
// collection or an object), which is bounded by its own timeoutSeconds
// instead of the request timeout and is not counted against the in-flight
// limits.
func IsLongRunning(req *http.Request) bool {
	return req.Method == http.MethodGet && req.URL.RawQuery != "" && request.IsWatch(req)
}

// Timeout bounds the requests it serves (see Serve).
type Timeout struct {
	// Max is the request timeout (the server's RequestTimeout).
	Max time.Duration
	// BodyRead bounds reading a request's body.
	BodyRead time.Duration
	// WriteError answers a request with err (a bad ?timeout=, or the
	// 504 of a request past its deadline).
	WriteError func(w http.ResponseWriter, req *http.Request, err error)
}

// Serve serves req under Max, or the shorter ?timeout= the client asks
// for (as kubectl --request-timeout sends): the handler runs in its own
// goroutine with a context that ends at the deadline (the context it
// hands to storage); if it has not started its answer by then, the client
// gets 504 with a Timeout Status at once. Either way Serve returns only
// after the handler has, so nothing of the request outlives it. A request
// body must arrive within BodyRead.
func (t *Timeout) Serve(w http.ResponseWriter, req *http.Request, serve http.HandlerFunc) {
	timeout, err := RequestTimeout(req, t.Max)
	if err != nil {
		t.WriteError(w, req, err)
		return
	}
	ctx, cancel := context.WithTimeout(req.Context(), timeout)
	defer cancel()
	req = req.WithContext(ctx)
	limitBodyRead(w, req, t.BodyRead)
	tw := &timeoutWriter{w: w, h: make(http.Header)}
	done := make(chan struct{})
	var panicked any
	go func() {
		defer close(done)
		defer func() {
			if p := recover(); p != nil {
				panicked = p
			}
		}()
		serve(tw, req)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			tw.timeout(func(w http.ResponseWriter) {
				t.WriteError(w, req, apierrors.NewTimeoutError(
					fmt.Sprintf("request did not complete within %s", timeout), 0))
			})
		}
		<-done
	}
	if panicked != nil {
		panic(panicked) // net/http aborts the connection (http.ErrAbortHandler) or logs it
	}
}

// RequestTimeout is limit, or the request's ?timeout= when that is
// shorter; a malformed one is 400.
func RequestTimeout(req *http.Request, limit time.Duration) (time.Duration, error) {
	if !strings.Contains(req.URL.RawQuery, "timeout=") {
		return limit, nil
	}
	v := req.URL.Query().Get("timeout")
	if v == "" {
		return limit, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, apierrors.NewBadRequest(fmt.Sprintf("invalid timeout %q in the request URL: want a positive duration such as 30s", v))
	}
	return min(d, limit), nil
}

// limitBodyRead sets the connection's read deadline for req's body to
// timeout from now, and clears it once the body has been read: a
// deadline left on the connection would end the request's context when
// net/http's background read (which watches for the client going away)
// hits it.
func limitBodyRead(w http.ResponseWriter, req *http.Request, timeout time.Duration) {
	if req.Body == nil || req.Body == http.NoBody {
		return
	}
	rc := http.NewResponseController(w)
	if rc.SetReadDeadline(time.Now().Add(timeout)) != nil {
		return
	}
	req.Body = &deadlineBody{ReadCloser: req.Body, rc: rc}
}

// deadlineBody clears the connection's read deadline at the end of the
// body.
type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	done bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.done {
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}

// timeoutWriter is the ResponseWriter of a handler under Timeout.
// The handler has its own header map, copied when it starts its answer;
// after a timeout answer its writes fail with http.ErrHandlerTimeout.
type timeoutWriter struct {
	w http.ResponseWriter
	h http.Header

	mu          sync.Mutex
	wroteHeader bool
	timedOut    bool
}

// Header implements http.ResponseWriter.
func (tw *timeoutWriter) Header() http.Header { return tw.h }

// WriteHeader implements http.ResponseWriter.
func (tw *timeoutWriter) WriteHeader(code int) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	tw.writeHeaderLocked(code)
}

func (tw *timeoutWriter) writeHeaderLocked(code int) {
	if tw.timedOut || tw.wroteHeader {
		return
	}
	tw.wroteHeader = true
	dst := tw.w.Header()
	for k, v := range tw.h {
		dst[k] = v
	}
	tw.w.WriteHeader(code)
}

// Write implements http.ResponseWriter.
func (tw *timeoutWriter) Write(b []byte) (int, error) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.timedOut {
		return 0, http.ErrHandlerTimeout
	}
	tw.writeHeaderLocked(http.StatusOK)
	return tw.w.Write(b)
}

// FlushError is what http.ResponseController.Flush calls.
func (tw *timeoutWriter) FlushError() error {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.timedOut {
		return http.ErrHandlerTimeout
	}
	tw.writeHeaderLocked(http.StatusOK)
	return http.NewResponseController(tw.w).Flush()
}

// Flush implements http.Flusher.
func (tw *timeoutWriter) Flush() { _ = tw.FlushError() }

// SetWriteDeadline is what http.ResponseController.SetWriteDeadline calls.
func (tw *timeoutWriter) SetWriteDeadline(t time.Time) error {
	return http.NewResponseController(tw.w).SetWriteDeadline(t)
}

// SetReadDeadline is what http.ResponseController.SetReadDeadline calls.
func (tw *timeoutWriter) SetReadDeadline(t time.Time) error {
	return http.NewResponseController(tw.w).SetReadDeadline(t)
}

// timeout answers with write unless the handler has started its answer;
// the handler's later writes fail.
func (tw *timeoutWriter) timeout(write func(http.ResponseWriter)) {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if tw.wroteHeader {
		return // the answer is under way (a long list); WriteTimeout bounds it
	}
	tw.timedOut = true
	write(tw.w)
}
