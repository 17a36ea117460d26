package demo

import (
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// laggingWatches delays the bytes of every watch response by lag (a delay
// line: order and pacing kept), as a slow network or an overloaded
// replica would; lists and writes go through at once. Setting lag to 0
// lets the bytes that arrive from then on through as soon as those before
// them are.
type laggingWatches struct {
	base http.RoundTripper
	lag  *atomic.Int64 // nanoseconds
}

func (l laggingWatches) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := l.base.RoundTrip(req)
	if err != nil || req.URL.Query().Get("watch") != "true" {
		return resp, err
	}
	resp.Body = newDelayedBody(resp.Body, l.lag)
	return resp, nil
}

// chunk is a piece of a body, readable from at on.
type chunk struct {
	data []byte
	err  error
	at   time.Time
}

// delayedBody hands out src's bytes lag after they arrived.
type delayedBody struct {
	src    io.ReadCloser
	chunks chan chunk
	done   chan struct{}
	once   sync.Once
	cur    chunk
}

func newDelayedBody(src io.ReadCloser, lag *atomic.Int64) *delayedBody {
	b := &delayedBody{src: src, chunks: make(chan chunk, 1024), done: make(chan struct{})}
	go b.pump(lag)
	return b
}

// pump reads src until it fails or the body is closed.
func (b *delayedBody) pump(lag *atomic.Int64) {
	for {
		buf := make([]byte, 32<<10)
		n, err := b.src.Read(buf)
		select {
		case b.chunks <- chunk{data: buf[:n], err: err, at: time.Now().Add(time.Duration(lag.Load()))}:
		case <-b.done:
			return
		}
		if err != nil {
			return
		}
	}
}

func (b *delayedBody) Read(p []byte) (int, error) {
	if len(b.cur.data) == 0 && b.cur.err == nil {
		select {
		case b.cur = <-b.chunks:
		case <-b.done:
			return 0, io.ErrClosedPipe
		}
		t := time.NewTimer(time.Until(b.cur.at))
		select {
		case <-t.C:
		case <-b.done:
			t.Stop()
			return 0, io.ErrClosedPipe
		}
	}
	n := copy(p, b.cur.data)
	b.cur.data = b.cur.data[n:]
	if len(b.cur.data) == 0 && b.cur.err != nil {
		return n, b.cur.err
	}
	return n, nil
}

func (b *delayedBody) Close() error {
	b.once.Do(func() { close(b.done) })
	return b.src.Close()
}
