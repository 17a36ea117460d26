package server

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/server/auth"
)

// TestWatchLimits: past MaxWatchesPerUser watches of one user, or
// MaxWatches in all, a watch is 429 with Retry-After and Kubernetes'
// wording; a watch that ends makes room again.
func TestWatchLimits(t *testing.T) {
	tokens, err := auth.ParseTokens(strings.NewReader(testTokens))
	require.NoError(t, err)
	f := newFixture(t, func(c *Config) {
		c.Authenticator = tokens
		c.MaxWatches, c.MaxWatchesPerUser = 3, 2
	})
	watch := func(token string) (*http.Response, context.CancelFunc) {
		ctx, cancel := context.WithCancel(context.Background())
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.ts.URL+apiBase+"/namespaces/ns/widgets?watch=true", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := f.client.Do(req)
		require.NoError(t, err)
		t.Cleanup(func() { cancel(); resp.Body.Close() })
		return resp, cancel
	}
	refused := func(resp *http.Response) {
		t.Helper()
		body, _ := io.ReadAll(resp.Body)
		require.Equal(t, http.StatusTooManyRequests, resp.StatusCode, string(body))
		require.Equal(t, "1", resp.Header.Get("Retry-After"))
		require.Contains(t, string(body), "Too many requests, please try again later.")
	}
	a1, cancelA1 := watch("alice-token")
	require.Equal(t, http.StatusOK, a1.StatusCode)
	a2, _ := watch("alice-token")
	require.Equal(t, http.StatusOK, a2.StatusCode)
	a3, _ := watch("alice-token")
	refused(a3) // alice's own limit
	b1, _ := watch("bob-token")
	require.Equal(t, http.StatusOK, b1.StatusCode)
	b2, _ := watch("bob-token")
	refused(b2) // the server's limit

	cancelA1()
	require.Eventually(t, func() bool {
		resp, cancel := watch("bob-token")
		if resp.StatusCode == http.StatusOK {
			return true
		}
		cancel()
		return false
	}, 10*time.Second, 20*time.Millisecond, "an ended watch makes room")
}
