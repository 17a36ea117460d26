package api

import (
	"io"
	"net/http"
	"strconv"
	"time"
)

// DefaultTooManyRequestsRetries is how many times RetryTooManyRequests
// retries one request (client-go's 10).
const DefaultTooManyRequestsRetries = 10

// maxRetryAfter caps the wait a Retry-After header may ask for.
const maxRetryAfter = 10 * time.Second

// RetryTooManyRequests wraps rt (nil: http.DefaultTransport) so that a
// 429 Too Many Requests, which the server answers before doing anything
// when it sheds load, is sent again after its Retry-After (1 s when it
// gives none), up to DefaultTooManyRequestsRetries times, as client-go's
// REST client does. Without it every component turns a burst of
// rejections into errors and its own exponential backoff: a ReplicaSet
// controller deleting 500 pods while another creates 500 crosses the
// server's 200 mutating requests in flight.
func RetryTooManyRequests(rt http.RoundTripper) http.RoundTripper {
	if rt == nil {
		rt = http.DefaultTransport
	}
	return retry429{rt: rt}
}

// retry429 is RetryTooManyRequests' transport.
type retry429 struct{ rt http.RoundTripper }

// RoundTrip sends req, again after each 429 while retries remain and the
// body can be sent again.
func (r retry429) RoundTrip(req *http.Request) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		resp, err := r.rt.RoundTrip(req)
		if err != nil || resp.StatusCode != http.StatusTooManyRequests || attempt == DefaultTooManyRequestsRetries {
			return resp, err
		}
		next := req.Clone(req.Context())
		if req.Body != nil && req.Body != http.NoBody {
			if req.GetBody == nil {
				return resp, nil // the body cannot be sent twice
			}
			if next.Body, err = req.GetBody(); err != nil {
				return resp, nil
			}
		}
		wait := time.Second
		if s, perr := strconv.Atoi(resp.Header.Get("Retry-After")); perr == nil && s >= 0 {
			wait = min(time.Duration(s)*time.Second, maxRetryAfter)
		}
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		_ = resp.Body.Close()
		t := time.NewTimer(wait)
		select {
		case <-req.Context().Done():
			t.Stop()
			return nil, req.Context().Err()
		case <-t.C:
		}
		req = next
	}
}

// CloseIdleConnections closes the wrapped transport's idle connections
// (http.Client.CloseIdleConnections reaches them through it).
func (r retry429) CloseIdleConnections() {
	if c, ok := r.rt.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
