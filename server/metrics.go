package server

import (
	"errors"
	"mime"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/listwatch/listwatch/server/filters"
	"github.com/listwatch/listwatch/server/request"
	"github.com/listwatch/listwatch/server/wire"
)

// serverMetrics are the request and watch metrics of a Server, named as
// kube-apiserver names its own. Every label value comes from a fixed set
// (metricVerb, the registered resources, codeLabel), so that no request can
// add series.
type serverMetrics struct {
	requests *prometheus.CounterVec   // verb, resource, subresource, code
	latency  *prometheus.HistogramVec // verb, resource, subresource (watches excluded)
	dropped  *prometheus.CounterVec   // request_kind
	// terminated counts watches ended by the slow-client policy
	// (Config.SlowWatcherTimeout), by resource.
	terminated *prometheus.CounterVec
	handler    http.Handler // /metrics

	reg        *prometheus.Registry
	collectors []prometheus.Collector
}

// newServerMetrics registers the server's collectors with reg, which
// /metrics then serves (with whatever else is registered there, such as
// the cachers' metrics).
func newServerMetrics(reg *prometheus.Registry, s *Server) (*serverMetrics, error) {
	m := &serverMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "apiserver_request_total",
			Help: "Requests by verb, resource, subresource and HTTP status code."}, []string{"verb", "resource", "subresource", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "apiserver_request_duration_seconds",
			Help:    "Time to answer a request (watches excluded), by verb, resource and subresource.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 4, 10)}, []string{"verb", "resource", "subresource"}),
		handler: promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg}),
	}
	m.dropped = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "apiserver_dropped_requests_total",
		Help: "Requests answered 429 because an in-flight limit was reached, by request kind (readOnly, mutating)."},
		[]string{"request_kind"})
	m.terminated = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "listwatch_server_slow_watchers_ended_total",
		Help: "Watches ended because their client took nothing for SlowWatcherTimeout while events waited, by resource."},
		[]string{"resource"})
	watches := prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "apiserver_longrunning_requests",
		Help: "Watch streams being served.", ConstLabels: prometheus.Labels{"verb": "WATCH"}},
		func() float64 { return float64(s.activeWatches.Load()) })
	m.reg = reg
	inflightFunc := func(kind string) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "apiserver_current_inflight_requests",
			Help:        "Requests being served (watches excluded) by request kind; counted only under a limit.",
			ConstLabels: prometheus.Labels{"request_kind": kind}},
			func() float64 { return float64(s.inflight.Count(kind)) })
	}
	for _, c := range []prometheus.Collector{m.requests, m.latency, m.dropped, m.terminated, watches,
		inflightFunc(filters.KindReadOnly), inflightFunc(filters.KindMutating)} {
		if err := reg.Register(c); err != nil {
			m.unregister()
			return nil, err
		}
		m.collectors = append(m.collectors, c)
	}
	// The Go runtime's and the process's collectors (go_*, process_*), as
	// every Kubernetes component serves them; kept when the registry has
	// them already.
	for _, c := range []prometheus.Collector{collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})} {
		err := reg.Register(c)
		var exists prometheus.AlreadyRegisteredError
		switch {
		case err == nil:
			m.collectors = append(m.collectors, c)
		case !errors.As(err, &exists):
			m.unregister()
			return nil, err
		}
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

// verb names a resource request as kube-apiserver's metrics do: GET,
// LIST and WATCH for reads, DELETECOLLECTION for a DELETE on a
// collection, APPLY for a server-side apply patch, else the method.
func verb(req *http.Request, t target) string {
	switch {
	case req.Method == http.MethodGet && request.IsWatch(req):
		return "WATCH"
	case req.Method == http.MethodGet && t.name == "":
		return "LIST"
	case req.Method == http.MethodGet:
		return "GET"
	case req.Method == http.MethodDelete && t.name == "":
		return "DELETECOLLECTION"
	case req.Method == http.MethodPatch && isApplyPatch(req):
		return "APPLY"
	}
	return metricVerb(req.Method)
}

// isApplyPatch reports whether req's body is a server-side apply patch.
func isApplyPatch(req *http.Request) bool {
	mt, _, _ := mime.ParseMediaType(req.Header.Get("Content-Type"))
	return mt == wire.MediaApplyPatch
}

// otherLabel is the label value of any verb or code outside the known
// sets, as Kubernetes collapses unknown HTTP methods.
const otherLabel = "other"

// metricVerb is method if it is a method the API knows, else "other".
func metricVerb(method string) string {
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete,
		http.MethodOptions:
		return method
	}
	return otherLabel
}

// codeLabels are the label values of the HTTP status codes 100-599.
var codeLabels = func() []string {
	out := make([]string, 600)
	for i := 100; i < len(out); i++ {
		out[i] = strconv.Itoa(i)
	}
	return out
}()

// codeLabel is code's label value; anything outside 100-599 is "other".
func codeLabel(code int) string {
	if code < 100 || code >= len(codeLabels) {
		return otherLabel
	}
	return codeLabels[code]
}

// observe records one answered resource request.
func (m *serverMetrics) observe(verb, resource, subresource string, code int, took time.Duration) {
	if m == nil {
		return
	}
	m.requests.WithLabelValues(verb, resource, subresource, codeLabel(code)).Inc()
	if verb != "WATCH" {
		m.latency.WithLabelValues(verb, resource, subresource).Observe(took.Seconds())
	}
}

// drop counts a request answered 429 by an in-flight limit.
func (m *serverMetrics) drop(kind string) {
	if m != nil {
		m.dropped.WithLabelValues(kind).Inc()
	}
}

// terminatedWatch counts a watch of resource ended as too slow; m may be
// nil (no Config.Metrics).
func (m *serverMetrics) terminatedWatch(resource string) {
	if m != nil {
		m.terminated.WithLabelValues(resource).Inc()
	}
}
