package filters

import (
	"log/slog"
	"net/http"
	"time"
)

// RequestLogLevel is the level of the per-request log lines (kube-apiserver's
// httplog at -v 2 and above): a handler at slog.Level(-v) shows them from
// -v 2. Failed requests (5xx) are logged at Warn whatever the level.
const RequestLogLevel = slog.LevelInfo - 2

// RequestInfo is what the layers of a request learn about it, for its
// log line and metrics: who asked and, for a resource request, its verb
// and resource. The server hands it down to the layers that fill it in
// (not in the request's context: a context value needs a copy of the
// request, which a watch would hold for its whole life).
type RequestInfo struct {
	User     string
	Verb     string // metric verb ("LIST", "WATCH", ...); "" for other paths
	Resource string // "" for other paths
	// Subresource is "status" or "scale" on a subresource, else "" (a
	// fixed set: the server routes no other).
	Subresource string
}

// LogWatchStart logs that a watch request has started, at RequestLogLevel.
func LogWatchStart(log *slog.Logger, req *http.Request, info *RequestInfo) {
	if !log.Enabled(req.Context(), RequestLogLevel) {
		return
	}
	log.LogAttrs(req.Context(), RequestLogLevel, "HTTP watch started",
		slog.String("verb", "WATCH"), slog.String("path", req.URL.RequestURI()), slog.String("user", info.User),
		slog.String("srcIP", req.RemoteAddr), slog.String("userAgent", req.UserAgent()))
}

// LogRequest logs an answered request: at RequestLogLevel, or Warn for a
// 5xx answer. The verb is info's (kube-apiserver's LIST,
// DELETECOLLECTION, ...), else otherVerb; method is the HTTP method. The
// user is "" when the request was answered before authentication (429, or
// a 401).
func LogRequest(log *slog.Logger, req *http.Request, info *RequestInfo, otherVerb string, code int, took time.Duration) {
	level := RequestLogLevel
	if code >= 500 {
		level = slog.LevelWarn
	}
	if !log.Enabled(req.Context(), level) {
		return
	}
	verb := info.Verb
	if verb == "" {
		verb = otherVerb
	}
	log.LogAttrs(req.Context(), level, "HTTP",
		slog.String("verb", verb), slog.String("method", req.Method), slog.String("path", req.URL.RequestURI()),
		slog.String("user", info.User),
		slog.Int("status", code), slog.Duration("latency", took),
		slog.String("srcIP", req.RemoteAddr), slog.String("userAgent", req.UserAgent()))
}

// StatusRecorder remembers the status code written through it; it keeps
// http.Flusher for watch streams.
type StatusRecorder struct {
	http.ResponseWriter
	// Code is the status written, 0 before anything was.
	Code int
}

// WriteHeader implements http.ResponseWriter.
func (r *StatusRecorder) WriteHeader(code int) {
	if r.Code == 0 {
		r.Code = code
	}
	r.ResponseWriter.WriteHeader(code)
}

// Write implements http.ResponseWriter.
func (r *StatusRecorder) Write(b []byte) (int, error) {
	if r.Code == 0 {
		r.Code = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// Flush implements http.Flusher.
func (r *StatusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (r *StatusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
