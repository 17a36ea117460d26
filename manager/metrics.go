package manager

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// leaderGauge is this manager's child of leader_election_master_status
// and, with leader election, of manager_leader_info; nil gauges when no
// Registerer was given.
type leaderGauge struct{ g, info prometheus.Gauge }

// newLeaderGauge registers (or reuses, for a second manager on the same
// registry) the gauge vectors and returns name's children, set to 0.
// identity is this replica's election identity ("" without leader
// election: no manager_leader_info then).
func newLeaderGauge(reg prometheus.Registerer, name, identity string) (leaderGauge, error) {
	if reg == nil {
		return leaderGauge{}, nil
	}
	status, err := registerGaugeVec(reg, prometheus.GaugeOpts{
		Name: "leader_election_master_status",
		Help: "1 while this replica is the leader of the named manager (its leader-only runnables may run), 0 otherwise.",
	}, "name")
	if err != nil {
		return leaderGauge{}, err
	}
	l := leaderGauge{g: status.WithLabelValues(name)}
	l.g.Set(0)
	if identity != "" {
		info, err := registerGaugeVec(reg, prometheus.GaugeOpts{
			Name: "manager_leader_info",
			Help: "1 while the replica with this election identity leads the named manager, 0 while it stands by: " +
				"the series at 1 says who leads.",
		}, "name", "identity")
		if err != nil {
			return leaderGauge{}, err
		}
		l.info = info.WithLabelValues(name, identity)
		l.info.Set(0)
	}
	return l, nil
}

// registerGaugeVec registers a gauge vector, or returns the one of the
// same name registered before.
func registerGaugeVec(reg prometheus.Registerer, opts prometheus.GaugeOpts, labels ...string) (*prometheus.GaugeVec, error) {
	return register(reg, prometheus.NewGaugeVec(opts, labels))
}

// register registers vec, or returns the collector of the same name
// registered before (a second manager on the same registry).
func register[V prometheus.Collector](reg prometheus.Registerer, vec V) (V, error) {
	if err := reg.Register(vec); err != nil {
		var are prometheus.AlreadyRegisteredError
		if !errors.As(err, &are) {
			return vec, fmt.Errorf("manager: register metrics: %w", err)
		}
		existing, ok := are.ExistingCollector.(V)
		if !ok {
			return vec, fmt.Errorf("manager: register metrics: %w", err)
		}
		vec = existing
	}
	return vec, nil
}

// freshnessMetrics are this manager's children of
// manager_cache_freshness_waiting and
// manager_cache_freshness_timeouts_total; nil when no Registerer was
// given.
type freshnessMetrics struct {
	waiting  prometheus.Gauge
	timeouts prometheus.Counter
}

// newFreshnessMetrics registers (or reuses) the vectors and returns name's
// children.
func newFreshnessMetrics(reg prometheus.Registerer, name string) (freshnessMetrics, error) {
	if reg == nil {
		return freshnessMetrics{}, nil
	}
	waiting, err := registerGaugeVec(reg, prometheus.GaugeOpts{
		Name: "manager_cache_freshness_waiting",
		Help: "1 while this replica, elected, waits for its cache's informers to catch up with etcd's current " +
			"revision before it starts its leader-only runnables, 0 otherwise.",
	}, "name")
	if err != nil {
		return freshnessMetrics{}, err
	}
	timeouts, err := register(reg, prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "manager_cache_freshness_timeouts_total",
		Help: "Waits of an elected replica for fresh caches that ran out of the freshness timeout (each is retried).",
	}, []string{"name"}))
	if err != nil {
		return freshnessMetrics{}, err
	}
	f := freshnessMetrics{waiting: waiting.WithLabelValues(name), timeouts: timeouts.WithLabelValues(name)}
	f.waiting.Set(0)
	return f, nil
}

// setWaiting sets the waiting gauge.
func (f freshnessMetrics) setWaiting(w bool) {
	if f.waiting == nil {
		return
	}
	v := 0.0
	if w {
		v = 1
	}
	f.waiting.Set(v)
}

// timedOut counts a wait that ran out of time.
func (f freshnessMetrics) timedOut() {
	if f.timeouts != nil {
		f.timeouts.Inc()
	}
}

func (l leaderGauge) set(leader bool) {
	if l.g == nil {
		return
	}
	v := 0.0
	if leader {
		v = 1
	}
	l.g.Set(v)
	if l.info != nil {
		l.info.Set(v)
	}
}
