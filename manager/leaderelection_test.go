package manager_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/manager"
)

// takeoverSlack is what a standby's takeover may take beyond
// LeaseDuration after the leader stopped renewing: etcd checks for expired
// leases every 500 ms, then the standby's watch sees the key's deletion.
const takeoverSlack = time.Second

// leaseDuration is the tests' LeaseDuration (see leaderElection).
const leaseDuration = 2 * time.Second

// startPair starts replica a, waits until it leads and reconciles, then
// starts standby b and waits until b's informers have synced while a keeps
// reconciling alone.
func startPair(t *testing.T, a, b *replica, rec *recorder) {
	t.Helper()
	a.start(t)
	a.waitElected(t, 10*time.Second)
	require.Eventually(t, func() bool { return rec.count("a") > 0 }, 10*time.Second, 5*time.Millisecond)
	b.start(t)
	require.Eventually(t, func() bool { return probe(t, b.m, "/readyz") == 200 }, 10*time.Second, 5*time.Millisecond)
	n := rec.count("a")
	require.Eventually(t, func() bool { return rec.count("a") > n+20 }, 10*time.Second, 5*time.Millisecond)
	require.Zero(t, rec.count("b"), "the standby reconciled")
	require.True(t, a.m.IsLeader())
	require.False(t, b.m.IsLeader())
}

// Two managers on one etcd: only the elected one reconciles. The leader is
// killed (its ctx cancelled without resigning, so its lease is left to
// expire) and the other takes over within the lease duration, with no
// overlap of the two managers' Reconciles.
func TestLeaderElectionFailoverWhenLeaderKilled(t *testing.T) {
	prefix := testPrefix(t)
	createWidget(t, prefix, "w1")
	rec := &recorder{}
	key := prefix + "/leader"
	ca, cb := newClient(t, etcd.Endpoints[0]), newClient(t, etcd.Endpoints[0])
	a := newReplica(t, "a", ca, prefix, rec, leaderElection(ca, key))
	b := newReplica(t, "b", cb, prefix, rec, leaderElection(cb, key))
	startPair(t, a, b, rec)

	killed := time.Now()
	require.NoError(t, a.stop(t), "a cancelled without losing leadership returns nil")
	b.waitElected(t, leaseDuration+5*time.Second)
	took := time.Since(killed)
	t.Logf("b took over %v after a was killed (lease %v)", took.Round(time.Millisecond), leaseDuration)
	require.Less(t, took, leaseDuration+takeoverSlack)
	require.Eventually(t, func() bool { return rec.count("b") > 20 }, 10*time.Second, 5*time.Millisecond)

	_, aLast := rec.span("a")
	bFirst, _ := rec.span("b")
	require.True(t, aLast.Before(bFirst), "a's last reconcile ended %v, b's first began %v", aLast, bFirst)
	rec.requireNoOverlap(t)
}

// The leader is cut off from etcd by a network partition (its connections
// stay open, every byte is dropped). It must stop reconciling by its renew
// deadline and Run must report ErrLeadershipLost; the standby is elected
// only when the leader's lease expires, after the old leader stopped, and
// within the lease duration of the partition.
func TestLeaderElectionFencesPartitionedLeader(t *testing.T) {
	prefix := testPrefix(t)
	createWidget(t, prefix, "w1")
	rec := &recorder{}
	key := prefix + "/leader"
	p := startProxy(t, etcd.Endpoints[0])
	ca, cb := newClient(t, p.endpoint()), newClient(t, etcd.Endpoints[0])
	a := newReplica(t, "a", ca, prefix, rec, leaderElection(ca, key))
	b := newReplica(t, "b", cb, prefix, rec, leaderElection(cb, key))
	startPair(t, a, b, rec)

	partitioned := time.Now()
	p.partition.Store(true)
	var err error
	select {
	case err = <-a.done:
		close(a.done)
	case <-time.After(leaseDuration + 5*time.Second):
		t.Fatal("the partitioned leader's Run did not return")
	}
	stopped := time.Since(partitioned)
	require.ErrorIs(t, err, manager.ErrLeadershipLost)
	require.False(t, a.m.IsLeader())
	require.Less(t, stopped, leaseDuration, "the partitioned leader stopped after its lease could have expired")

	b.waitElected(t, leaseDuration+5*time.Second)
	took := time.Since(partitioned)
	t.Logf("a stopped %v after the partition; b took over %v after it (lease %v)",
		stopped.Round(time.Millisecond), took.Round(time.Millisecond), leaseDuration)
	require.Less(t, took, leaseDuration+takeoverSlack)
	require.Eventually(t, func() bool { return rec.count("b") > 20 }, 10*time.Second, 5*time.Millisecond)

	_, aLast := rec.span("a")
	bFirst, _ := rec.span("b")
	require.True(t, aLast.Before(bFirst), "a's last reconcile ended %v, b's first began %v", aLast, bFirst)
	rec.requireNoOverlap(t)
	require.Equal(t, 500, probe(t, a.m, "/healthz"), "a manager that lost leadership is not healthy")
	lost := a.logs.find(t, "lost leadership")
	require.Equal(t, "ERROR", lost["level"])
	require.Equal(t, []any{"widget"}, lost["runnables"], "the log names the controllers that stopped")
	require.NotEmpty(t, lost["err"])
}

// With ReleaseOnCancel the leader revokes its lease when its ctx ends,
// after its controllers stopped: the standby takes over at once rather than
// after the lease duration, still without overlap.
func TestLeaderElectionReleaseOnCancel(t *testing.T) {
	prefix := testPrefix(t)
	createWidget(t, prefix, "w1")
	rec := &recorder{}
	key := prefix + "/leader"
	ca, cb := newClient(t, etcd.Endpoints[0]), newClient(t, etcd.Endpoints[0])
	le := leaderElection(ca, key)
	le.ReleaseOnCancel = true
	a := newReplica(t, "a", ca, prefix, rec, le)
	b := newReplica(t, "b", cb, prefix, rec, leaderElection(cb, key))
	startPair(t, a, b, rec)

	cancelled := time.Now()
	require.NoError(t, a.stop(t))
	b.waitElected(t, leaseDuration+5*time.Second)
	took := time.Since(cancelled)
	t.Logf("b took over %v after a resigned", took.Round(time.Millisecond))
	require.Less(t, took, leaseDuration/2)
	require.Eventually(t, func() bool { return rec.count("b") > 0 }, 10*time.Second, 5*time.Millisecond)
	rec.requireNoOverlap(t)
}
