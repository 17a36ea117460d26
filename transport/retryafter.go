package transport

import (
	"net/http"
	"strconv"
	"time"
)

// RetryAfter is the wait resp's Retry-After header asks for, read at now:
// whole seconds or an HTTP date (a date in the past is 0); false when the
// header is absent or unreadable.
func RetryAfter(resp *http.Response, now time.Time) (time.Duration, bool) {
	h := resp.Header.Get("Retry-After")
	if s, err := strconv.Atoi(h); err == nil && s >= 0 {
		return time.Duration(s) * time.Second, true
	}
	if at, err := http.ParseTime(h); err == nil {
		return max(at.Sub(now), 0), true
	}
	return 0, false
}

// retryWait is how long to wait before sending a 429'd request again:
// its Retry-After capped at MaxRetryAfter, 1 s without one.
func retryWait(resp *http.Response, now time.Time) time.Duration {
	d, ok := RetryAfter(resp, now)
	if !ok {
		return time.Second
	}
	return min(d, MaxRetryAfter)
}
