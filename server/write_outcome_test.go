package server

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestCreateOfUnknownOutcomeIsNotRetried: with etcd frozen after the
// connection was made (SIGSTOP, a partition: the create is sent and held),
// a generateName create answers 504 Timeout without Retry-After, naming
// no endpoint; a client that retries as client-go does (429 or 5xx with
// Retry-After) does not retry it, so when etcd resumes there is at most
// one generated widget (the held create may or may not be applied: that is
// what the 504 says), never two.
func TestCreateOfUnknownOutcomeIsNotRetried(t *testing.T) {
	st, proxy := newFreezableStoreTimeout(t, "/widgets", 500*time.Millisecond)
	f := newFixture(t, func(c *Config) { c.Resources[0] = widgets(st) })
	col := "/apis/" + group + "/v1/namespaces/default/widgets"
	list := func() int {
		r := f.do(http.MethodGet, col, "", nil)
		if r.code != http.StatusOK {
			return -1
		}
		var l struct{ Items []any }
		require.NoError(t, json.Unmarshal(r.body, &l))
		return len(l.Items)
	}
	require.Equal(t, 0, list())

	proxy.freeze()
	body := map[string]any{"apiVersion": group + "/v1", "kind": "Widget",
		"metadata": map[string]any{"generateName": "w-", "namespace": "default"}}
	var answers []int
	for range 3 { // client-go's retry: only a 429 or 5xx that carries Retry-After
		r := f.do(http.MethodPost, col, "application/json", body)
		answers = append(answers, r.code)
		if r.code == http.StatusGatewayTimeout {
			var s metav1.Status
			require.NoError(t, json.Unmarshal(r.body, &s))
			require.Equal(t, metav1.StatusReasonTimeout, s.Reason)
			require.NotContains(t, s.Message, "127.0.0.1", "the endpoint is for the log")
		}
		if (r.code != http.StatusTooManyRequests && r.code < 500) || r.header.Get("Retry-After") == "" {
			break
		}
	}
	require.Equal(t, []int{http.StatusGatewayTimeout}, answers, "one 504 without Retry-After, not retried")

	proxy.thaw()
	// A named create after the thaw is ordered after the held one (etcd
	// reads the connection in order): once it is in, the held create has
	// landed or never will.
	barrier := map[string]any{"apiVersion": group + "/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "barrier", "namespace": "default"}}
	deadline := time.Now().Add(10 * time.Second)
	for f.do(http.MethodPost, col, "application/json", barrier).code != http.StatusCreated {
		require.True(t, time.Now().Before(deadline), "etcd did not come back")
		time.Sleep(50 * time.Millisecond) // polling for etcd's return
	}
	n := list()
	require.True(t, n == 1 || n == 2, "%d widgets", n)
	t.Logf("the create of unknown outcome was applied: %v (one generated widget at most)", n == 2)
}
