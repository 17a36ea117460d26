package server

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
)

// TestClientCancellationIsNotAServerFailure: a request its client
// cancelled is recorded as 499 (client closed request) in the metrics and
// the request log, not as a 5xx, and logs no WARN.
func TestClientCancellationIsNotAServerFailure(t *testing.T) {
	logs := &syncBuffer{}
	f := newFixture(t, func(c *Config) {
		c.Metrics = prometheus.NewRegistry()
		c.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	col := "/apis/" + group + "/v1/namespaces/default/widgets"
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the client went away before the answer
	req := httptest.NewRequestWithContext(ctx, http.MethodGet, col, nil)
	rec := httptest.NewRecorder()
	f.srv.ServeHTTP(rec, req)
	require.Equal(t, StatusClientClosedRequest, rec.Code)
	logs.mu.Lock()
	out := logs.b.String()
	logs.mu.Unlock()
	require.NotContains(t, out, "level=WARN", "a cancellation is not a server failure")
	m := string(f.do(http.MethodGet, "/metrics", "", nil).body)
	var list []string
	for line := range strings.SplitSeq(m, "\n") {
		if strings.HasPrefix(line, "apiserver_request_total{") && strings.Contains(line, `verb="LIST"`) {
			list = append(list, line)
		}
	}
	require.Len(t, list, 1, "%s", m)
	require.Contains(t, list[0], `code="499"`)
}
