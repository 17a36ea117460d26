package client

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestRetryAfter: seconds and HTTP dates are read, capped at
// MaxRetryAfter; anything else waits one second.
func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for h, want := range map[string]time.Duration{
		"":     time.Second,
		"junk": time.Second,
		"-3":   time.Second,
		"0":    0,
		"2":    2 * time.Second,
		"3600": MaxRetryAfter,
		now.Add(3 * time.Second).Format(http.TimeFormat):  3 * time.Second,
		now.Add(-3 * time.Second).Format(http.TimeFormat): 0,
		now.Add(time.Hour).Format(http.TimeFormat):        MaxRetryAfter,
	} {
		assert.Equal(t, want, retryAfter(h, now), "Retry-After %q", h)
	}
}
