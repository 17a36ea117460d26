package server

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/server/auth"
	"github.com/listwatch/listwatch/server/filters"
)

// TestInflightLimits: with one read-only and one mutating slot, a read
// held by a frozen etcd makes the next read 429 with Retry-After: 1, while
// writes and watches go on; a held write makes the next write 429.
func TestInflightLimits(t *testing.T) {
	st, proxy := newFreezableStore(t, "/widgets")
	f := newFixture(t, func(c *Config) {
		c.Resources[0].Storage = st
		c.MaxRequestsInFlight, c.MaxMutatingRequestsInFlight = 1, 1
	})
	gadget := func(name string) map[string]any {
		return map[string]any{"apiVersion": group + "/v1", "kind": "Gadget", "metadata": map[string]any{"name": name}}
	}
	proxy.freeze()
	held := make(chan response, 2)
	go func() { held <- f.do(http.MethodGet, apiBase+"/namespaces/ns/widgets/a", "", nil) }()
	require.Eventually(t, func() bool { return f.srv.inflight.Count(filters.KindReadOnly) == 1 }, 10*time.Second, 5*time.Millisecond)

	r := f.do(http.MethodGet, apiBase+"/gadgets", "", nil)
	r.status(t, http.StatusTooManyRequests, metav1.StatusReasonTooManyRequests)
	require.Equal(t, "1", r.header.Get("Retry-After"))
	w := f.watch(apiBase + "/gadgets?watch=true") // watches are not counted
	require.Equal(t, http.StatusCreated, f.do(http.MethodPost, apiBase+"/gadgets", "application/json", gadget("g1")).code,
		"writes have their own limit")
	require.Equal(t, "ADDED", w.next().Type)

	go func() {
		held <- f.do(http.MethodPost, apiBase+"/namespaces/ns/widgets", "application/json", testWidget("ns", "b", nil, ""))
	}()
	require.Eventually(t, func() bool { return f.srv.inflight.Count(filters.KindMutating) == 1 }, 10*time.Second, 5*time.Millisecond)
	r = f.do(http.MethodPost, apiBase+"/gadgets", "application/json", gadget("g2"))
	r.status(t, http.StatusTooManyRequests, metav1.StatusReasonTooManyRequests)
	require.Equal(t, "1", r.header.Get("Retry-After"))

	proxy.thaw()
	codes := []int{(<-held).code, (<-held).code}
	require.ElementsMatch(t, []int{http.StatusNotFound, http.StatusCreated}, codes, "the held get and create, once etcd is back")
	require.Equal(t, http.StatusOK, f.do(http.MethodGet, apiBase+"/gadgets", "", nil).code)
}

// TestAuthenticatedBeforeLimits: with the read-only limit reached, a
// request with wrong credentials is 401, not 429 (it is refused before it
// could take a slot), and a known user still gets the limit's 429.
func TestAuthenticatedBeforeLimits(t *testing.T) {
	tokens, err := auth.ParseTokens(strings.NewReader(testTokens))
	require.NoError(t, err)
	st, proxy := newFreezableStore(t, "/widgets")
	f := newFixture(t, func(c *Config) {
		c.Resources[0].Storage = st
		c.Authenticator = tokens
		c.MaxRequestsInFlight = 1
	})
	get := func(token string) *http.Response {
		req, err := http.NewRequestWithContext(testCtx(t), http.MethodGet, f.ts.URL+apiBase+"/gadgets", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := f.client.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp
	}
	proxy.freeze()
	held := make(chan int, 1)
	go func() {
		req, _ := http.NewRequestWithContext(testCtx(t), http.MethodGet, f.ts.URL+apiBase+"/namespaces/ns/widgets/a", nil)
		req.Header.Set("Authorization", "Bearer alice-token")
		resp, err := f.client.Do(req)
		if err != nil {
			held <- 0
			return
		}
		resp.Body.Close()
		held <- resp.StatusCode
	}()
	require.Eventually(t, func() bool { return f.srv.inflight.Count(filters.KindReadOnly) == 1 }, 10*time.Second, 5*time.Millisecond)
	require.Equal(t, http.StatusUnauthorized, get("wrong-token").StatusCode)
	require.Equal(t, http.StatusTooManyRequests, get("bob-token").StatusCode)
	proxy.thaw()
	require.Equal(t, http.StatusNotFound, <-held)
}

// TestMetricLabelsBounded: made-up HTTP methods, unknown resources and
// unknown groups add no series to /metrics.
func TestMetricLabelsBounded(t *testing.T) {
	f := newFixture(t, func(c *Config) { c.Metrics = prometheus.NewRegistry() })
	series := func() int {
		r := f.do(http.MethodGet, "/metrics", "", nil)
		require.Equal(t, http.StatusOK, r.code)
		n := 0
		for _, l := range strings.Split(string(r.body), "\n") {
			if l != "" && l[0] != '#' {
				n++
			}
		}
		return n
	}
	send := func(i int) {
		method := "MADEUP" + string(rune('A'+i%26)) + string(rune('A'+i/26))
		r := f.do(method, apiBase+"/namespaces/ns/widgets/a", "", nil)
		require.Equal(t, http.StatusMethodNotAllowed, r.code, method)
		f.do(method, apiBase+"/namespaces/ns/nosuch", "", nil)
		f.do(method, "/apis/nosuch.example/v1/things", "", nil)
	}
	send(0)
	before := series()
	for i := 1; i < 60; i++ {
		send(i)
	}
	require.Equal(t, before, series(), "made-up methods added series")
	body := string(f.do(http.MethodGet, "/metrics", "", nil).body)
	require.Contains(t, body, `apiserver_request_total{code="405",resource="widgets",subresource="",verb="other"} 60`)
}
