package manager

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// leaderGauge is this manager's child of leader_election_master_status,
// or nil when no Registerer was given.
type leaderGauge struct{ g prometheus.Gauge }

// newLeaderGauge registers (or reuses, for a second manager on the same
// registry) the gauge vector and returns name's child, set to 0.
func newLeaderGauge(reg prometheus.Registerer, name string) (leaderGauge, error) {
	if reg == nil {
		return leaderGauge{}, nil
	}
	vec := prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "leader_election_master_status",
		Help: "1 while this replica is the leader of the named manager (its leader-only runnables may run), 0 otherwise.",
	}, []string{"name"})
	if err := reg.Register(vec); err != nil {
		var are prometheus.AlreadyRegisteredError
		if !errors.As(err, &are) {
			return leaderGauge{}, fmt.Errorf("manager: register metrics: %w", err)
		}
		existing, ok := are.ExistingCollector.(*prometheus.GaugeVec)
		if !ok {
			return leaderGauge{}, fmt.Errorf("manager: register metrics: %w", err)
		}
		vec = existing
	}
	g := vec.WithLabelValues(name)
	g.Set(0)
	return leaderGauge{g: g}, nil
}

func (l leaderGauge) set(leader bool) {
	if l.g == nil {
		return
	}
	if leader {
		l.g.Set(1)
	} else {
		l.g.Set(0)
	}
}
