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
		`apiserver_request_total{code="201",resource="widgets",verb="APPLY"} 1`,
		`apiserver_request_total{code="200",resource="widgets",verb="DELETE"} 1`,
		`apiserver_request_total{code="200",resource="widgets",verb="DELETECOLLECTION"} 1`,
	} {
		require.True(t, strings.Contains(body, want), "missing %s in:\n%s", want, body)
	}
}
