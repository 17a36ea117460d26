package api

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRetryTooManyRequests: a request answered 429 is sent again, with
// its body, after Retry-After; a body that cannot be replayed gets the
// 429; the retries stop after DefaultTooManyRequestsRetries.
func TestRetryTooManyRequests(t *testing.T) {
	var calls atomic.Int32
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		bodies = append(bodies, string(b))
		if calls.Add(1) <= 2 {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			return
		}
		w.WriteHeader(http.StatusCreated)
	}))
	defer srv.Close()
	hc := &http.Client{Transport: RetryTooManyRequests(nil)}
	resp, err := hc.Post(srv.URL, "application/json", strings.NewReader(`{"a":1}`))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	require.Equal(t, []string{`{"a":1}`, `{"a":1}`, `{"a":1}`}, bodies, "the body is sent each time")

	// A body without GetBody is not replayed.
	calls.Store(0)
	req, err := http.NewRequest(http.MethodPost, srv.URL, io.NopCloser(strings.NewReader("x")))
	require.NoError(t, err)
	resp, err = hc.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusTooManyRequests, resp.StatusCode)

	// Always 429: given up after the retries.
	var n atomic.Int32
	busy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		w.Header().Set("Retry-After", "0")
		w.WriteHeader(http.StatusTooManyRequests)
	}))
	defer busy.Close()
	resp, err = hc.Get(busy.URL)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
	require.Equal(t, int32(DefaultTooManyRequestsRetries+1), n.Load())
}
