package workqueue

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// prometheusMetrics implements ProgressMetrics with Prometheus collectors
// labelled with the queue's name.
type prometheusMetrics struct {
	depth   prometheus.Gauge
	adds    prometheus.Counter
	latency prometheus.Observer
	work    prometheus.Observer
	retries prometheus.Counter
	// progress is the queue's inProgress, once the queue is created.
	progress atomic.Pointer[func() (time.Duration, time.Duration)]
}

// NewPrometheusMetrics returns Metrics for the queue called name and
// registers its collectors in reg under client-go's names, so that
// dashboards made for client-go's work queues apply: workqueue_depth,
// workqueue_adds_total, workqueue_queue_duration_seconds,
// workqueue_work_duration_seconds, workqueue_unfinished_work_seconds,
// workqueue_longest_running_processor_seconds and workqueue_retries_total,
// each with the label name=<name>. Names must be unique per registry; the
// Metrics serve one queue.
func NewPrometheusMetrics(reg prometheus.Registerer, name string) (Metrics, error) {
	labels := prometheus.Labels{"name": name}
	buckets := prometheus.ExponentialBuckets(1e-6, 10, 10) // 1µs .. 1000s
	m := &prometheusMetrics{}
	m.depth = prometheus.NewGauge(prometheus.GaugeOpts{
		Subsystem: "workqueue", Name: "depth",
		Help: "Items waiting to be handed out by Get.", ConstLabels: labels,
	})
	adds := prometheus.NewCounter(prometheus.CounterOpts{
		Subsystem: "workqueue", Name: "adds_total",
		Help: "Adds that made an item dirty (not de-duplicated).", ConstLabels: labels,
	})
	m.adds = adds
	latency := prometheus.NewHistogram(prometheus.HistogramOpts{
		Subsystem: "workqueue", Name: "queue_duration_seconds",
		Help: "Time an item waited in the queue before Get.", ConstLabels: labels, Buckets: buckets,
	})
	m.latency = latency
	work := prometheus.NewHistogram(prometheus.HistogramOpts{
		Subsystem: "workqueue", Name: "work_duration_seconds",
		Help: "Time between Get and Done of an item.", ConstLabels: labels, Buckets: buckets,
	})
	m.work = work
	unfinished := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Subsystem: "workqueue", Name: "unfinished_work_seconds",
		Help: "Seconds of work done so far on the items being processed (Get, no Done yet); " +
			"a value that keeps growing means a stuck worker.", ConstLabels: labels,
	}, func() float64 { u, _ := m.inProgress(); return u.Seconds() })
	longest := prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Subsystem: "workqueue", Name: "longest_running_processor_seconds",
		Help: "Seconds the longest-running item being processed has been so.", ConstLabels: labels,
	}, func() float64 { _, l := m.inProgress(); return l.Seconds() })
	retries := prometheus.NewCounter(prometheus.CounterOpts{
		Subsystem: "workqueue", Name: "retries_total",
		Help: "Calls to AddRateLimited.", ConstLabels: labels,
	})
	m.retries = retries
	var registered []prometheus.Collector
	for _, c := range []prometheus.Collector{m.depth, adds, latency, work, unfinished, longest, retries} {
		if err := reg.Register(c); err != nil {
			for _, r := range registered { // all or nothing
				reg.Unregister(r)
			}
			return nil, fmt.Errorf("workqueue %q metrics: %w", name, err)
		}
		registered = append(registered, c)
	}
	return m, nil
}

// inProgress is the queue's work in progress; zero before the queue
// exists.
func (m *prometheusMetrics) inProgress() (unfinished, longest time.Duration) {
	if f := m.progress.Load(); f != nil {
		return (*f)()
	}
	return 0, 0
}

// TrackProgress implements ProgressMetrics.
func (m *prometheusMetrics) TrackProgress(f func() (time.Duration, time.Duration)) {
	m.progress.Store(&f)
}

func (m *prometheusMetrics) Added()                       { m.adds.Inc() }
func (m *prometheusMetrics) Depth(n int)                  { m.depth.Set(float64(n)) }
func (m *prometheusMetrics) Latency(d time.Duration)      { m.latency.Observe(d.Seconds()) }
func (m *prometheusMetrics) WorkDuration(d time.Duration) { m.work.Observe(d.Seconds()) }
func (m *prometheusMetrics) Retried()                     { m.retries.Inc() }
