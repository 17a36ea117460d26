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
	vec := prometheus.NewGaugeVec(opts, labels)
	if err := reg.Register(vec); err != nil {
		var are prometheus.AlreadyRegisteredError
		if !errors.As(err, &are) {
			return nil, fmt.Errorf("manager: register metrics: %w", err)
		}
		existing, ok := are.ExistingCollector.(*prometheus.GaugeVec)
		if !ok {
			return nil, fmt.Errorf("manager: register metrics: %w", err)
		}
		vec = existing
	}
	return vec, nil
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
