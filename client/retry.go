package client

import (
	"io"
	"net/http"
	"strconv"
	"time"
)

// DefaultTooManyRequestsRetries is how many times RetryTooManyRequests
// sends one request again after a 429 (client-go's REST client: 10).
const DefaultTooManyRequestsRetries = 10

// MaxRetryAfter caps the wait a Retry-After header may ask for; a 429
// without a usable Retry-After waits one second.
const MaxRetryAfter = 10 * time.Second

// RetryTooManyRequests wraps rt (nil: http.DefaultTransport) so that a
// request answered 429 Too Many Requests is sent again after the answer's
// Retry-After (in seconds or as an HTTP date, capped at MaxRetryAfter; 1 s
// when absent), up to DefaultTooManyRequestsRetries times, as client-go's
// REST client does. The wait ends early with the request's context, whose
// error is then returned. After the last retry the 429 itself is returned
// (NewHTTP turns it into an error for which IsTooManyRequests holds).
//
// Every verb is resent, POST and PATCH included: a 429 means the server
// shed the request before processing it. That holds for this library's
// in-flight limiter (server) and for kube-apiserver's max-in-flight and
// priority-and-fairness filters, which answer 429 before the handler
// runs. A request whose body cannot be produced again (no GetBody) gets
// its first 429.
//
// NewHTTP applies it to its HTTPClient's transport (once: a transport
// that is already wrapped is kept as it is); wrap the transport of other
// raw http.Clients talking to the same server with it.
func RetryTooManyRequests(rt http.RoundTripper) http.RoundTripper {
	if rt == nil {
		rt = http.DefaultTransport
	}
	if r, ok := rt.(retry429); ok {
		return r
	}
	return retry429{rt: rt}
}

// retry429 is RetryTooManyRequests' transport.
type retry429 struct{ rt http.RoundTripper }

// RoundTrip sends req, again after each 429 while retries remain, the
// body can be sent again and req's context is live.
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
		wait := retryAfter(resp.Header.Get("Retry-After"), time.Now())
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		_ = resp.Body.Close()
		t := time.NewTimer(wait)
		select {
		case <-req.Context().Done():
			t.Stop()
			if next.Body != nil {
				_ = next.Body.Close()
			}
			return nil, req.Context().Err()
		case <-t.C:
		}
		req = next
	}
}

// retryAfter is the wait a Retry-After header value asks for, read at
// now: seconds or an HTTP date, capped at MaxRetryAfter, 1 s when h is
// absent or unreadable.
func retryAfter(h string, now time.Time) time.Duration {
	wait := time.Second
	if s, err := strconv.Atoi(h); err == nil && s >= 0 {
		wait = time.Duration(s) * time.Second
	} else if at, err := http.ParseTime(h); err == nil {
		wait = max(at.Sub(now), 0)
	}
	return min(wait, MaxRetryAfter)
}

// CloseIdleConnections closes the wrapped transport's idle connections
// (http.Client.CloseIdleConnections reaches them through it).
func (r retry429) CloseIdleConnections() {
	if c, ok := r.rt.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
