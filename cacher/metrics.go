package cacher

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metrics receives the cacher's measurements. Implementations must be safe
// for concurrent use and cheap: they are called on the dispatch path.
type Metrics interface {
	// EventReceived counts one event applied to the cache; delivered is the
	// number of watchers it was published for.
	EventReceived(delivered int)
	// WatchersChanged adds delta (+1 or -1) to the number of open watches.
	WatchersChanged(delta int)
	// WatcherLagged counts a watcher leaving live dispatch to catch up.
	WatcherLagged()
	// WatcherTerminated counts a watch ended by the cacher with an error event.
	WatcherTerminated(reason string)
	// CacheResourceVersion reports the cache's RV.
	CacheResourceVersion(rv uint64)
	// ListServed counts a list served from "cache" or "storage".
	ListServed(source string)
	// ReadWait observes how long a read waited for the cache to be fresh.
	ReadWait(d time.Duration)
	// Reinitialized counts a recovery of the cache from a storage it could
	// not follow: its storage watch kept failing (the cache then relists),
	// or a list failed on unreadable data (every watch then ends).
	Reinitialized()
	// ConsistencyChecked counts a consistency check of the cache against
	// the storage; consistent is false when they differed (the cache then
	// relists).
	ConsistencyChecked(consistent bool)
	// DivergencePersists counts, once per occurrence, differences between
	// the cache and the storage that a relist did not remove (objects
	// stored at keys that do not match their metadata): they are reported,
	// not repaired again.
	DivergencePersists()
}

// NoopMetrics discards everything.
type NoopMetrics struct{}

// EventReceived implements Metrics.
func (NoopMetrics) EventReceived(int) {}

// WatchersChanged implements Metrics.
func (NoopMetrics) WatchersChanged(int) {}

// WatcherLagged implements Metrics.
func (NoopMetrics) WatcherLagged() {}

// WatcherTerminated implements Metrics.
func (NoopMetrics) WatcherTerminated(string) {}

// CacheResourceVersion implements Metrics.
func (NoopMetrics) CacheResourceVersion(uint64) {}

// ListServed implements Metrics.
func (NoopMetrics) ListServed(string) {}

// ReadWait implements Metrics.
func (NoopMetrics) ReadWait(time.Duration) {}

// Reinitialized implements Metrics.
func (NoopMetrics) Reinitialized() {}

// ConsistencyChecked implements Metrics.
func (NoopMetrics) ConsistencyChecked(bool) {}

// DivergencePersists implements Metrics.
func (NoopMetrics) DivergencePersists() {}

// PrometheusMetrics exports Metrics as Prometheus collectors labelled with
// the resource, under kube-apiserver's watch-cache names where it has an
// equivalent (apiserver_watch_cache_events_received_total,
// apiserver_watch_cache_events_dispatched_total,
// apiserver_watch_cache_resource_version,
// apiserver_watch_cache_read_wait_seconds, apiserver_cache_list_total,
// apiserver_terminated_watchers_total) and listwatch_cacher_* otherwise
// (watchers, lagging_watchers_total, reinitializations_total,
// consistency_checks_total).
type PrometheusMetrics struct {
	received, dispatched prometheus.Counter
	watchers             prometheus.Gauge
	lagged               prometheus.Counter
	terminated           *prometheus.CounterVec
	rv                   prometheus.Gauge
	lists                *prometheus.CounterVec
	readWait             prometheus.Histogram
	reinitialized        prometheus.Counter
	consistencyChecks    *prometheus.CounterVec
}

// NewPrometheusMetrics creates the collectors for resource and registers
// them with reg.
func NewPrometheusMetrics(reg prometheus.Registerer, resource string) (*PrometheusMetrics, error) {
	labels := prometheus.Labels{"resource": resource}
	opts := func(name, help string) prometheus.Opts {
		return prometheus.Opts{Name: name, Help: help, ConstLabels: labels}
	}
	m := &PrometheusMetrics{
		received:   prometheus.NewCounter(prometheus.CounterOpts(opts("apiserver_watch_cache_events_received_total", "Events applied to the watch cache."))),
		dispatched: prometheus.NewCounter(prometheus.CounterOpts(opts("apiserver_watch_cache_events_dispatched_total", "Events dispatched to watchers."))),
		watchers:   prometheus.NewGauge(prometheus.GaugeOpts(opts("listwatch_cacher_watchers", "Open watches."))),
		lagged:     prometheus.NewCounter(prometheus.CounterOpts(opts("listwatch_cacher_lagging_watchers_total", "Watchers that left live dispatch to catch up."))),
		terminated: prometheus.NewCounterVec(prometheus.CounterOpts(opts("apiserver_terminated_watchers_total", "Watches the cacher ended with an error event, by reason.")), []string{"reason"}),
		rv:         prometheus.NewGauge(prometheus.GaugeOpts(opts("apiserver_watch_cache_resource_version", "The watch cache's resource version."))),
		lists:      prometheus.NewCounterVec(prometheus.CounterOpts(opts("apiserver_cache_list_total", "Lists served by the cacher, by source: cache (from memory, what kube-apiserver counts) or storage (delegated).")), []string{"source"}),
		readWait: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "apiserver_watch_cache_read_wait_seconds", Help: "Time reads waited for the watch cache to be fresh.", ConstLabels: labels,
			Buckets: prometheus.ExponentialBuckets(0.001, 4, 8)}),
		reinitialized: prometheus.NewCounter(prometheus.CounterOpts(opts("listwatch_cacher_reinitializations_total",
			"Re-initialisations of the watch cache after its storage watch kept failing."))),
		consistencyChecks: prometheus.NewCounterVec(prometheus.CounterOpts(opts("listwatch_cacher_consistency_checks_total",
			"Consistency checks of the watch cache against the storage, by result (consistent, diverged, persistent: "+
				"a difference a relist did not remove, counted once).")), []string{"result"}),
	}
	for _, c := range []prometheus.Collector{m.received, m.dispatched, m.watchers, m.lagged, m.terminated, m.rv, m.lists, m.readWait, m.reinitialized, m.consistencyChecks} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// EventReceived implements Metrics.
func (m *PrometheusMetrics) EventReceived(delivered int) {
	m.received.Inc()
	m.dispatched.Add(float64(delivered))
}

// WatchersChanged implements Metrics.
func (m *PrometheusMetrics) WatchersChanged(delta int) { m.watchers.Add(float64(delta)) }

// WatcherLagged implements Metrics.
func (m *PrometheusMetrics) WatcherLagged() { m.lagged.Inc() }

// Reinitialized implements Metrics.
func (m *PrometheusMetrics) Reinitialized() { m.reinitialized.Inc() }

// ConsistencyChecked implements Metrics.
func (m *PrometheusMetrics) ConsistencyChecked(consistent bool) {
	result := "diverged"
	if consistent {
		result = "consistent"
	}
	m.consistencyChecks.WithLabelValues(result).Inc()
}

// DivergencePersists implements Metrics.
func (m *PrometheusMetrics) DivergencePersists() {
	m.consistencyChecks.WithLabelValues("persistent").Inc()
}

// WatcherTerminated implements Metrics.
func (m *PrometheusMetrics) WatcherTerminated(reason string) {
	m.terminated.WithLabelValues(reason).Inc()
}

// CacheResourceVersion implements Metrics.
func (m *PrometheusMetrics) CacheResourceVersion(rv uint64) { m.rv.Set(float64(rv)) }

// ListServed implements Metrics.
func (m *PrometheusMetrics) ListServed(source string) { m.lists.WithLabelValues(source).Inc() }

// ReadWait implements Metrics.
func (m *PrometheusMetrics) ReadWait(d time.Duration) { m.readWait.Observe(d.Seconds()) }
