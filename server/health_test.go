package server

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/server/auth"
)

// TestHealthEndpoints: /livez, /readyz and /healthz answer as
// kube-apiserver does, per check with ?verbose, one check by path, a
// failing check (a storage not ready, a server shutting down) with 500.
func TestHealthEndpoints(t *testing.T) {
	f := newFixture(t)
	for _, p := range []string{"/livez", "/readyz", "/healthz", "/readyz/etcd", "/livez/ping"} {
		r := f.do(http.MethodGet, p, "", nil)
		require.Equal(t, http.StatusOK, r.code, p)
		require.Equal(t, "ok", string(r.body), p)
	}
	r := f.do(http.MethodGet, "/readyz?verbose", "", nil)
	require.Equal(t, http.StatusOK, r.code)
	for _, line := range []string{"[+]ping ok", "[+]etcd ok", "[+]resource-ready:widgets.demo.listwatch.dev ok",
		"[+]resource-ready:gadgets.demo.listwatch.dev ok", "[+]shutdown ok", "readyz check passed"} {
		require.Contains(t, string(r.body), line)
	}
	require.NotContains(t, string(f.do(http.MethodGet, "/livez?verbose", "", nil).body), "resource-ready")
	require.Equal(t, http.StatusNotFound, f.do(http.MethodGet, "/readyz/nope", "", nil).code)

	notReady := newFixture(t, func(c *Config) { c.Resources[0].Storage = notReadyStore{c.Resources[0].Storage} })
	r = notReady.do(http.MethodGet, "/readyz", "", nil)
	require.Equal(t, http.StatusInternalServerError, r.code)
	require.Contains(t, string(r.body), "[-]resource-ready:widgets.demo.listwatch.dev failed")
	require.Equal(t, http.StatusOK, notReady.do(http.MethodGet, "/livez", "", nil).code, "liveness ignores readiness")
	require.Equal(t, http.StatusOK, notReady.do(http.MethodGet, "/readyz?exclude=resource-ready:widgets.demo.listwatch.dev", "", nil).code)

	f.srv.Close()
	r = f.do(http.MethodGet, "/readyz", "", nil)
	require.Equal(t, http.StatusInternalServerError, r.code)
	require.Contains(t, string(r.body), "[-]shutdown failed")
}

// TestMetricsEndpoint: /metrics serves the registry given in Config with
// request counts by verb, resource and code, latencies and open watches.
func TestMetricsEndpoint(t *testing.T) {
	reg := prometheus.NewRegistry()
	f := newFixture(t, func(c *Config) { c.Metrics = reg })
	f.create("ns", "a", nil, "")
	f.do(http.MethodGet, apiBase+"/namespaces/ns/widgets", "", nil)
	f.do(http.MethodGet, apiBase+"/namespaces/ns/widgets/missing", "", nil)
	w := f.watch(apiBase + "/namespaces/ns/widgets?watch=true")
	f.create("ns", "b", nil, "")
	require.Equal(t, "ADDED", w.next().Type)

	body := string(f.do(http.MethodGet, "/metrics", "", nil).body)
	for _, want := range []string{
		`apiserver_request_total{code="201",resource="widgets",subresource="",verb="POST"} 2`,
		`apiserver_request_total{code="200",resource="widgets",subresource="",verb="LIST"} 1`,
		`apiserver_request_total{code="404",resource="widgets",subresource="",verb="GET"} 1`,
		`apiserver_request_duration_seconds_count{resource="widgets",subresource="",verb="LIST"} 1`,
		`apiserver_longrunning_requests{verb="WATCH"} 1`,
	} {
		require.True(t, strings.Contains(body, want), "missing %s in:\n%s", want, body)
	}
	require.Equal(t, http.StatusNotFound, newFixture(t).do(http.MethodGet, "/metrics", "", nil).code, "no registry, no /metrics")
}

// TestLivezIgnoresEtcdOutage: with etcd frozen, /readyz fails its etcd
// check within HealthCheckTimeout while /livez stays 200 (restarting the
// process cannot bring etcd back); Config.ReadyChecks add named checks to
// /readyz only, and replace a built-in check of the same name.
func TestLivezIgnoresEtcdOutage(t *testing.T) {
	st, proxy := newFreezableStore(t, "/widgets")
	var customErr atomic.Value
	customErr.Store(errNone)
	f := newFixture(t, func(c *Config) {
		c.Resources[0].Storage = st
		c.HealthCheckTimeout = 300 * time.Millisecond
		c.ReadyChecks = []HealthCheck{{Name: "custom", Check: func(context.Context) error {
			if err := customErr.Load().(error); err != errNone {
				return err
			}
			return nil
		}}}
	})
	r := f.do(http.MethodGet, "/readyz?verbose", "", nil)
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	require.Contains(t, string(r.body), "[+]custom ok")
	require.Equal(t, http.StatusOK, f.do(http.MethodGet, "/readyz/custom", "", nil).code)

	proxy.freeze()
	start := time.Now()
	r = f.do(http.MethodGet, "/readyz?verbose", "", nil)
	require.Less(t, time.Since(start), 2*time.Second, "the checks run concurrently, each bounded")
	require.Equal(t, http.StatusInternalServerError, r.code)
	for _, line := range []string{"[+]ping ok", "[-]etcd failed: reason withheld", "[+]custom ok", "readyz check failed"} {
		require.Contains(t, string(r.body), line)
	}
	require.Equal(t, http.StatusInternalServerError, f.do(http.MethodGet, "/readyz/etcd", "", nil).code)
	for _, p := range []string{"/livez", "/livez/ping"} {
		r = f.do(http.MethodGet, p, "", nil)
		require.Equal(t, http.StatusOK, r.code, "%s during an etcd outage: %s", p, r.body)
	}
	r = f.do(http.MethodGet, "/livez?verbose", "", nil)
	require.NotContains(t, string(r.body), "etcd")
	require.NotContains(t, string(r.body), "custom")
	require.Equal(t, http.StatusNotFound, f.do(http.MethodGet, "/livez/etcd", "", nil).code)

	customErr.Store(errors.New("custom is down"))
	r = f.do(http.MethodGet, "/readyz/custom", "", nil)
	require.Equal(t, http.StatusInternalServerError, r.code)
	require.Contains(t, string(r.body), "[-]custom failed: reason withheld")
	proxy.thaw()
	require.Equal(t, http.StatusOK, f.do(http.MethodGet, "/readyz/etcd", "", nil).code)

	replaced := newFixture(t, func(c *Config) {
		c.ReadyChecks = []HealthCheck{{Name: "etcd", Check: func(context.Context) error { return errors.New("embedder's etcd check") }}}
	})
	r = replaced.do(http.MethodGet, "/readyz?verbose", "", nil)
	require.Equal(t, http.StatusInternalServerError, r.code)
	require.Equal(t, 1, strings.Count(string(r.body), "etcd"), string(r.body))
	_, err := New(Config{Resources: []Resource{widgets(st)}, ReadyChecks: []HealthCheck{{Name: "a/b", Check: func(context.Context) error { return nil }}}})
	require.Error(t, err)
}

// errNone stands for no error in an atomic.Value.
var errNone = errors.New("none")

// TestHealthFollowsAuthenticator: /readyz, /livez and /healthz are open to
// requests without credentials, and 401 for credentials the Authenticator
// refuses, as kube-apiserver answers them.
func TestHealthFollowsAuthenticator(t *testing.T) {
	tokens, err := auth.ParseTokens(strings.NewReader(testTokens))
	require.NoError(t, err)
	f := newFixture(t, func(c *Config) { c.Authenticator = tokens })
	for _, path := range []string{"/readyz", "/livez", "/healthz"} {
		for token, want := range map[string]int{"": http.StatusOK, "alice-token": http.StatusOK, "wrong": http.StatusUnauthorized} {
			req, err := http.NewRequestWithContext(testCtx(t), http.MethodGet, f.ts.URL+path, nil)
			require.NoError(t, err)
			if token != "" {
				req.Header.Set("Authorization", "Bearer "+token)
			}
			resp, err := f.client.Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, want, resp.StatusCode, "%s with token %q", path, token)
		}
	}
}
