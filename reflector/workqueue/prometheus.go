package workqueue

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// prometheusMetrics implements Metrics with Prometheus collectors labelled
// with the queue's name.
type prometheusMetrics struct {
	depth   prometheus.Gauge
	adds    prometheus.Counter
	latency prometheus.Observer
	work    prometheus.Observer
	retries prometheus.Counter
}

// NewPrometheusMetrics returns Metrics for the queue called name and
// registers its collectors in reg: listwatch_workqueue_depth, _adds_total,
// _queue_duration_seconds, _work_duration_seconds and _retries_total, each
// with the constant label name=<name>. Names must be unique per registry.
func NewPrometheusMetrics(reg prometheus.Registerer, name string) (Metrics, error) {
	labels := prometheus.Labels{"name": name}
	buckets := prometheus.ExponentialBuckets(1e-6, 10, 10) // 1µs .. 1000s
	depth := prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: "listwatch", Subsystem: "workqueue", Name: "depth",
		Help: "Items waiting to be handed out by Get.", ConstLabels: labels,
	})
	adds := prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "listwatch", Subsystem: "workqueue", Name: "adds_total",
		Help: "Adds that made an item dirty (not de-duplicated).", ConstLabels: labels,
	})
	latency := prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: "listwatch", Subsystem: "workqueue", Name: "queue_duration_seconds",
		Help: "Time an item waited in the queue before Get.", ConstLabels: labels, Buckets: buckets,
	})
	work := prometheus.NewHistogram(prometheus.HistogramOpts{
		Namespace: "listwatch", Subsystem: "workqueue", Name: "work_duration_seconds",
		Help: "Time between Get and Done of an item.", ConstLabels: labels, Buckets: buckets,
	})
	retries := prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: "listwatch", Subsystem: "workqueue", Name: "retries_total",
		Help: "Calls to AddRateLimited.", ConstLabels: labels,
	})
	var registered []prometheus.Collector
	for _, c := range []prometheus.Collector{depth, adds, latency, work, retries} {
		if err := reg.Register(c); err != nil {
			for _, r := range registered { // all or nothing
				reg.Unregister(r)
			}
			return nil, fmt.Errorf("workqueue %q metrics: %w", name, err)
		}
		registered = append(registered, c)
	}
	return &prometheusMetrics{depth: depth, adds: adds, latency: latency, work: work, retries: retries}, nil
}

func (m *prometheusMetrics) Added()                       { m.adds.Inc() }
func (m *prometheusMetrics) Depth(n int)                  { m.depth.Set(float64(n)) }
func (m *prometheusMetrics) Latency(d time.Duration)      { m.latency.Observe(d.Seconds()) }
func (m *prometheusMetrics) WorkDuration(d time.Duration) { m.work.Observe(d.Seconds()) }
func (m *prometheusMetrics) Retried()                     { m.retries.Inc() }
