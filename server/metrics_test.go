package server

import (
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
)

// Request metrics name a DELETE on a collection DELETECOLLECTION and a
// server-side apply APPLY, as kube-apiserver's apiserver_request_total
// does, not DELETE and PATCH.
func TestMetricsVerbsAsKubeAPIServer(t *testing.T) {
	reg := prometheus.NewRegistry()
	f := newFixture(t, func(c *Config) { c.Metrics = reg })
	f.create("ns", "a", nil, "")
	r := f.do(http.MethodPatch, apiBase+"/namespaces/ns/widgets/b?fieldManager=test", "application/apply-patch+yaml",
		"apiVersion: demo.listwatch.dev/v1\nkind: Widget\nmetadata:\n  name: b\n")
	require.Equal(t, http.StatusCreated, r.code, string(r.body))
	r = f.do(http.MethodDelete, apiBase+"/namespaces/ns/widgets/a", "", nil)
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	r = f.do(http.MethodDelete, apiBase+"/namespaces/ns/widgets", "", nil)
	require.Equal(t, http.StatusOK, r.code, string(r.body))

	body := string(f.do(http.MethodGet, "/metrics", "", nil).body)
	for _, want := range []string{
		`apiserver_request_total{code="201",resource="widgets",subresource="",verb="APPLY"} 1`,
		`apiserver_request_total{code="200",resource="widgets",subresource="",verb="DELETE"} 1`,
		`apiserver_request_total{code="200",resource="widgets",subresource="",verb="DELETECOLLECTION"} 1`,
	} {
		require.True(t, strings.Contains(body, want), "missing %s in:\n%s", want, body)
	}
}

// TestMetricsCollectorsAndSubresource: /metrics serves the Go runtime's
// and the process's collectors, and counts /scale and /status requests
// under their subresource.
func TestMetricsCollectorsAndSubresource(t *testing.T) {
	reg := prometheus.NewRegistry()
	f := newFixture(t, withSubresources, func(c *Config) { c.Metrics = reg })
	f.create("ns", "a", nil, "")
	r := f.do(http.MethodGet, apiBase+"/namespaces/ns/widgets/a/scale", "", nil)
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	body := string(f.do(http.MethodGet, "/metrics", "", nil).body)
	for _, want := range []string{"\ngo_goroutines ", "\nprocess_cpu_seconds_total ",
		`apiserver_request_total{code="200",resource="widgets",subresource="scale",verb="GET"} 1`,
		`apiserver_request_total{code="201",resource="widgets",subresource="",verb="POST"} 1`} {
		require.Contains(t, body, want)
	}
}
