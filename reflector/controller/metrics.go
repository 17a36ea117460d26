package controller

import (
	"errors"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Reconcile results, the values of the result label of
// controller_runtime_reconcile_total.
const (
	ResultSuccess      = "success"
	ResultError        = "error"
	ResultRequeue      = "requeue"
	ResultRequeueAfter = "requeue_after"
)

// reconcileMetrics are one controller's children of the
// controller_runtime_reconcile_* metrics (controller-runtime's names, so
// its dashboards apply), or all nil without a Registerer.
type reconcileMetrics struct {
	total  map[string]prometheus.Counter // by result
	errors prometheus.Counter
	panics prometheus.Counter
	time   prometheus.Observer
}

// newReconcileMetrics registers (or reuses, for a second controller on the
// same registry) the metric vectors and returns name's children.
func newReconcileMetrics(reg prometheus.Registerer, name string) (reconcileMetrics, error) {
	if reg == nil {
		return reconcileMetrics{}, nil
	}
	total, err := register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "controller_runtime_reconcile_total",
		Help: "Reconciles per controller and result (success, error, requeue, requeue_after).",
	}, []string{"controller", "result"}))
	if err != nil {
		return reconcileMetrics{}, err
	}
	errs, err := register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "controller_runtime_reconcile_errors_total",
		Help: "Reconciles that returned an error or panicked, per controller.",
	}, []string{"controller"}))
	if err != nil {
		return reconcileMetrics{}, err
	}
	panics, err := register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "controller_runtime_reconcile_panics_total",
		Help: "Reconciles that panicked (recovered), per controller.",
	}, []string{"controller"}))
	if err != nil {
		return reconcileMetrics{}, err
	}
	times, err := register(reg, prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "controller_runtime_reconcile_time_seconds",
		Help:    "Duration of Reconcile calls, per controller.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 16), // 1 ms .. 33 s
	}, []string{"controller"}))
	if err != nil {
		return reconcileMetrics{}, err
	}
	m := reconcileMetrics{
		total:  map[string]prometheus.Counter{},
		errors: errs.WithLabelValues(name),
		panics: panics.WithLabelValues(name),
		time:   times.WithLabelValues(name),
	}
	for _, r := range []string{ResultSuccess, ResultError, ResultRequeue, ResultRequeueAfter} {
		m.total[r] = total.WithLabelValues(name, r)
	}
	errs.WithLabelValues(name).Add(0)
	return m, nil
}

// register registers c, or returns the collector of the same name
// registered before.
func register[C prometheus.Collector](reg prometheus.Registerer, c C) (C, error) {
	if err := reg.Register(c); err != nil {
		var are prometheus.AlreadyRegisteredError
		if errors.As(err, &are) {
			if existing, ok := are.ExistingCollector.(C); ok {
				return existing, nil
			}
		}
		var zero C
		return zero, fmt.Errorf("controller: register metrics: %w", err)
	}
	return c, nil
}

// observe records one Reconcile.
func (m reconcileMetrics) observe(result string, d time.Duration, panicked bool) {
	if m.time == nil {
		return
	}
	m.total[result].Inc()
	m.time.Observe(d.Seconds())
	if result == ResultError {
		m.errors.Inc()
	}
	if panicked {
		m.panics.Inc()
	}
}
