package server

import (
	"context"
	"log/slog"
	"net/http"
	"time"
)

// RequestLogLevel is the level of the per-request log lines (kube-apiserver's
// httplog at -v 2 and above): a handler at slog.Level(-v) shows them from
// -v 2. Failed requests (5xx) are logged at Warn whatever the level.
const RequestLogLevel = slog.LevelInfo - 2

// requestInfo is what the layers of a request learn about it, for its
// log line and metrics: who asked and, for a resource request, its verb
// and resource.
type requestInfo struct {
	user     string
	verb     string // metric verb ("LIST", "WATCH", ...); "" for other paths
	resource string // "" for other paths
}

type requestInfoKey struct{}

// infoFrom returns the requestInfo of ctx (nil outside ServeHTTP).
func infoFrom(ctx context.Context) *requestInfo {
	info, _ := ctx.Value(requestInfoKey{}).(*requestInfo)
	return info
}

// logWatchStart logs that a watch request has started, at RequestLogLevel.
func (s *Server) logWatchStart(req *http.Request) {
	if !s.log.Enabled(req.Context(), RequestLogLevel) {
		return
	}
	user := ""
	if info := infoFrom(req.Context()); info != nil {
		user = info.user
	}
	s.log.LogAttrs(req.Context(), RequestLogLevel, "HTTP watch started",
		slog.String("verb", "WATCH"), slog.String("path", req.URL.RequestURI()), slog.String("user", user),
		slog.String("srcIP", req.RemoteAddr), slog.String("userAgent", req.UserAgent()))
}

// logRequest logs an answered request: at RequestLogLevel, or Warn for a
// 5xx answer. verb is kube-apiserver's (LIST, DELETECOLLECTION, ...),
// method the HTTP method. The user is "" when the request was answered before
// authentication (429, or a 401).
func (s *Server) logRequest(req *http.Request, info *requestInfo, code int, took time.Duration) {
	level := RequestLogLevel
	if code >= 500 {
		level = slog.LevelWarn
	}
	if !s.log.Enabled(req.Context(), level) {
		return
	}
	verb := info.verb
	if verb == "" {
		verb = metricVerb(req.Method)
	}
	s.log.LogAttrs(req.Context(), level, "HTTP",
		slog.String("verb", verb), slog.String("method", req.Method), slog.String("path", req.URL.RequestURI()),
		slog.String("user", info.user),
		slog.Int("status", code), slog.Duration("latency", took),
		slog.String("srcIP", req.RemoteAddr), slog.String("userAgent", req.UserAgent()))
}
