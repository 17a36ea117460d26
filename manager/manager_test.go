package manager_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/manager"
)

func TestNewRejectsInvalidOptions(t *testing.T) {
	c := etcd.Client
	for name, opts := range map[string]manager.Options{
		"no name":                     {},
		"no client":                   {Name: "m", LeaderElection: &manager.LeaderElection{Key: "/k"}},
		"no key":                      {Name: "m", LeaderElection: &manager.LeaderElection{Client: c}},
		"renew deadline beyond lease": {Name: "m", LeaderElection: &manager.LeaderElection{Client: c, Key: "/k", LeaseDuration: 2 * time.Second, RenewDeadline: 2 * time.Second}},
		"retry beyond renew deadline": {Name: "m", LeaderElection: &manager.LeaderElection{Client: c, Key: "/k", RenewDeadline: time.Second, RetryPeriod: time.Second}},
		"negative":                    {Name: "m", LeaderElection: &manager.LeaderElection{Client: c, Key: "/k", RetryPeriod: -1}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := manager.New(opts)
			require.ErrorIs(t, err, manager.ErrInvalidOptions)
		})
	}
}

// Without leader election the controllers run at once; the probes follow
// the informers' sync and Run; the leader gauge is 1 while they run; Run
// returns nil after everything stopped (goleak checks the goroutines in
// TestMain).
func TestManagerProbesMetricsAndShutdown(t *testing.T) {
	prefix := testPrefix(t)
	createWidget(t, prefix, "w1")
	rec := &recorder{}
	reg := prometheus.NewPedanticRegistry()
	r := newReplicaWith(t, "solo", etcd.Client, prefix, rec, manager.Options{Name: "widgets", Registerer: reg})
	_, err := manager.New(manager.Options{Name: "other", Registerer: reg})
	require.NoError(t, err, "a second manager on the same registry")

	require.Equal(t, 500, probe(t, r.m, "/healthz"), "healthz before Run")
	r.start(t)
	<-r.m.Elected()
	require.Eventually(t, func() bool { return rec.count("solo") > 0 }, 10*time.Second, 5*time.Millisecond)
	require.Eventually(t, func() bool { return probe(t, r.m, "/readyz") == 200 }, 10*time.Second, 5*time.Millisecond)
	require.Equal(t, 200, probe(t, r.m, "/healthz"))
	require.Equal(t, 1.0, leaderStatus(t, reg, "widgets"))
	require.Equal(t, 0.0, leaderStatus(t, reg, "other"), "a second manager shares the metric")

	r.m.AddReadyzCheck("custom", func(*http.Request) error { return errors.New("not today") })
	require.Equal(t, 500, probe(t, r.m, "/readyz"))

	require.NoError(t, r.stop(t))
	require.Equal(t, 0.0, leaderStatus(t, reg, "widgets"))
	require.Equal(t, 500, probe(t, r.m, "/healthz"), "healthz after Run")
}

// A Runnable's error stops the manager and is Run's result.
func TestManagerRunnableErrorStopsRun(t *testing.T) {
	m, err := manager.New(manager.Options{Name: "m"})
	require.NoError(t, err)
	boom := errors.New("boom")
	stopped := make(chan struct{})
	require.NoError(t, m.Add(manager.RunnableFunc(func(ctx context.Context) error {
		<-ctx.Done()
		close(stopped)
		return nil
	})))
	require.NoError(t, m.Add(manager.RunnableFunc(func(context.Context) error { return boom })))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.ErrorIs(t, m.Run(ctx), boom)
	<-stopped
	require.ErrorIs(t, m.Run(ctx), manager.ErrAlreadyStarted)
	require.ErrorIs(t, m.Add(manager.RunnableFunc(func(context.Context) error { return nil })), manager.ErrAlreadyStarted)
}

// leaderStatus returns leader_election_master_status{name} from reg.
func leaderStatus(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != "leader_election_master_status" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "name" && l.GetValue() == name {
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	t.Fatalf("no leader_election_master_status{name=%q}", name)
	return 0
}
