package transport

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are a Transport's collectors, named as Kubernetes' component-base
// names client-go's where one exists; nil records nothing. Their verb label
// is the request's method from a fixed set, WATCH for a watch, else
// "other".
type metrics struct {
	wait     *prometheus.HistogramVec // rest_client_rate_limiter_duration_seconds{verb}
	retries  *prometheus.CounterVec   // rest_client_request_retries_total{code,verb}
	rejected *prometheus.CounterVec   // rest_client_rate_limiter_deadline_exceeded_total{verb}
}

// newMetrics registers the collectors on reg (or reuses those registered
// there before, by another Transport); nil when reg is nil.
func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	if reg == nil {
		return nil, nil
	}
	wait, err := register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "rest_client_rate_limiter_duration_seconds",
		Help:    "How long requests waited for their turn under the client-side rate limit.",
		Buckets: []float64{0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60},
	}, []string{"verb"}))
	if err != nil {
		return nil, err
	}
	retries, err := register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rest_client_request_retries_total",
		Help: "Requests sent again, by the HTTP code of the answer that made them retry.",
	}, []string{"code", "verb"}))
	if err != nil {
		return nil, err
	}
	rejected, err := register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "rest_client_rate_limiter_deadline_exceeded_total",
		Help: "Requests failed without being sent because their turn under the client-side rate limit came after their deadline.",
	}, []string{"verb"}))
	if err != nil {
		return nil, err
	}
	return &metrics{wait: wait, retries: retries, rejected: rejected}, nil
}

// register registers c on reg, or returns the collector of the same name
// registered before.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if !errors.As(err, &are) {
			return c, fmt.Errorf("transport: register metrics: %w", err)
		}
		existing, ok := are.ExistingCollector.(C)
		if !ok {
			return c, fmt.Errorf("transport: register metrics: %w", err)
		}
		return existing, nil
	}
	return c, nil
}

func (m *metrics) observeWait(req *http.Request, d time.Duration) {
	if m != nil {
		m.wait.WithLabelValues(verb(req)).Observe(d.Seconds())
	}
}

func (m *metrics) retried(req *http.Request, code string) {
	if m != nil {
		m.retries.WithLabelValues(code, verb(req)).Inc()
	}
}

func (m *metrics) throttled(req *http.Request) {
	if m != nil {
		m.rejected.WithLabelValues(verb(req)).Inc()
	}
}

// verb is req's verb label.
func verb(req *http.Request) string {
	if isWatch(req) {
		return "WATCH"
	}
	switch req.Method {
	case http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodHead:
		return req.Method
	}
	return "other"
}
