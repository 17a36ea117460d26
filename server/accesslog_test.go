package server

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/server/auth"
)

// syncBuffer is a bytes.Buffer safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// records returns the JSON log records written so far.
func (s *syncBuffer) records(t *testing.T) []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(s.b.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), l)
		out = append(out, m)
	}
	return out
}

// find returns the first record with msg whose attributes include want.
func find(recs []map[string]any, msg string, want map[string]any) map[string]any {
	for _, r := range recs {
		if r["msg"] != msg {
			continue
		}
		ok := true
		for k, v := range want {
			if r[k] != v {
				ok = false
			}
		}
		if ok {
			return r
		}
	}
	return nil
}

// TestAccessLog: at RequestLogLevel every request is logged with verb,
// path, user, status and latency, a watch when it starts and when it ends;
// at Info only failures (5xx) are, at Warn.
func TestAccessLog(t *testing.T) {
	var buf syncBuffer
	tokens, err := auth.ParseTokens(strings.NewReader(testTokens))
	require.NoError(t, err)
	f := newFixture(t, func(c *Config) {
		c.Logger = slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: RequestLogLevel}))
		c.Authenticator, c.AllowAnonymous = tokens, true
	})
	req, err := http.NewRequestWithContext(testCtx(t), http.MethodGet, f.ts.URL+apiBase+"/namespaces/ns/widgets", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer alice-token")
	resp, err := f.client.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	f.create("ns", "a", nil, "")
	w := f.watch(apiBase + "/namespaces/ns/widgets?watch=true&timeoutSeconds=1")
	for range w.events {
	}
	recs := buf.records(t)
	list := find(recs, "HTTP", map[string]any{"verb": "LIST", "method": "GET", "user": "alice", "status": 200.0,
		"path": apiBase + "/namespaces/ns/widgets", "level": "DEBUG+2"})
	require.NotNil(t, list, "no access line for the list in %v", recs)
	require.Contains(t, list, "latency")
	require.NotNil(t, find(recs, "HTTP", map[string]any{"verb": "POST", "user": auth.AnonymousUser, "status": 201.0}), recs)
	require.NotNil(t, find(recs, "HTTP watch started", map[string]any{"verb": "WATCH", "user": auth.AnonymousUser}), recs)
	require.NotNil(t, find(recs, "HTTP", map[string]any{"verb": "WATCH", "status": 200.0}), recs)
}

// TestDefaultLoggerLogsFailures: without Config.Logger the server logs to
// slog.Default(), so a 5xx (here a timeout against a frozen etcd) leaves
// a trace; successful requests do not at Info.
func TestDefaultLoggerLogsFailures(t *testing.T) {
	var buf syncBuffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewJSONHandler(&buf, nil)))
	defer slog.SetDefault(prev)
	st, proxy := newFreezableStore(t, "/widgets")
	f := newFixture(t, func(c *Config) {
		c.Logger = nil
		c.Resources[0].Storage = st
		c.RequestTimeout = 300 * time.Millisecond
	})
	f.create("ns", "a", nil, "")
	proxy.freeze()
	require.Equal(t, http.StatusGatewayTimeout, f.do(http.MethodGet, apiBase+"/namespaces/ns/widgets/a", "", nil).code)
	proxy.thaw()
	recs := buf.records(t)
	require.NotNil(t, find(recs, "HTTP", map[string]any{"verb": "GET", "status": 504.0, "level": "WARN"}), recs)
	require.NotNil(t, find(recs, "request failed", map[string]any{"code": 504.0}), recs)
	require.Nil(t, find(recs, "HTTP", map[string]any{"verb": "POST"}), "2xx is not logged at Info")
}

// String returns what was written so far.
func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
