package server

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// serverMetrics are the request and watch metrics of a Server, named as
// kube-apiserver names its own.
type serverMetrics struct {
	requests *prometheus.CounterVec   // verb, resource, code
	latency  *prometheus.HistogramVec // verb, resource (watches excluded)
	handler  http.Handler             // /metrics

	reg        *prometheus.Registry
	collectors []prometheus.Collector
}

// newServerMetrics registers the server's collectors with reg, which
// /metrics then serves (with whatever else is registered there, such as
// the cachers' metrics).
func newServerMetrics(reg *prometheus.Registry, s *Server) (*serverMetrics, error) {
	m := &serverMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "apiserver_request_total",
			Help: "Requests by verb, resource and HTTP status code."}, []string{"verb", "resource", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "apiserver_request_duration_seconds",
			Help:    "Time to answer a request (watches excluded), by verb and resource.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 4, 10)}, []string{"verb", "resource"}),
		handler: promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}),
	}
	watches := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "apiserver_longrunning_requests",
		Help: "Watch streams being served.", ConstLabels: prometheus.Labels{"verb": "WATCH"}},
		func() float64 { return float64(s.activeWatches.Load()) })
	m.reg = reg
	for _, c := range []prometheus.Collector{m.requests, m.latency, watches} {
		if err := reg.Register(c); err != nil {
			m.unregister()
			return nil, err
		}
		m.collectors = append(m.collectors, c)
	}
	return m, nil
}

// unregister removes the server's collectors from the registry (on Close),
// so that a new Server can register its own there.
func (m *serverMetrics) unregister() {
	for _, c := range m.collectors {
		m.reg.Unregister(c)
	}
	m.collectors = nil
}

// verb names a resource request as kube-apiserver's metrics do.
func verb(req *http.Request, t target) string {
	switch req.Method {
	case http.MethodGet:
		if isWatch(req) {
			return "WATCH"
		}
		if t.name == "" {
			return "LIST"
		}
		return "GET"
	case http.MethodPost:
		return "POST"
	}
	return req.Method
}

// isWatch reports whether req asks for a watch stream.
func isWatch(req *http.Request) bool {
	v := req.URL.Query().Get("watch")
	b, err := strconv.ParseBool(v)
	return err == nil && b
}

// observe records one answered resource request.
func (m *serverMetrics) observe(verb, resource string, code int, took time.Duration) {
	if m == nil {
		return
	}
	m.requests.WithLabelValues(verb, resource, strconv.Itoa(code)).Inc()
	if verb != "WATCH" {
		m.latency.WithLabelValues(verb, resource).Observe(took.Seconds())
	}
}

// statusRecorder remembers the status code written through it; it keeps
// http.Flusher for watch streams.
type statusRecorder struct {
	http.ResponseWriter
	code int
}

func (r *statusRecorder) WriteHeader(code int) {
	if r.code == 0 {
		r.code = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Write(b []byte) (int, error) {
	if r.code == 0 {
		r.code = http.StatusOK
	}
	return r.ResponseWriter.Write(b)
}

// Flush implements http.Flusher.
func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
