package simulator

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/examples/nodelifecycle/api"
	"github.com/listwatch/listwatch/examples/nodelifecycle/api/apitest"
	"github.com/listwatch/listwatch/reflector/workqueue/workqueuetest"
)

// TestSimulator: Setup creates Z×N Ready nodes with zone labels, their
// leases and their pods (one daemon pod per node, then plain and tolerating
// pods, Running); Run renews leases; a stopped node's heartbeats stop while the
// others' go on, and resume; a node whose NodeReady was set to Unknown posts
// True again.
func TestSimulator(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	env := apitest.Start(t, etcdServer.Client, apitest.Options{})
	c, inf := env.Client, env.Informers
	sim, err := New(Config{Client: c, Zones: 2, NodesPerZone: 2, PodsPerNode: 3, RenewInterval: 20 * time.Millisecond,
		Nodes: inf.Nodes, TolerationSeconds: 7})
	require.NoError(t, err)
	require.NoError(t, sim.Setup(ctx))
	env.StartInformers(t)
	require.Equal(t, []string{"node-a0", "node-a1", "node-b0", "node-b1"}, sim.Nodes())
	require.Len(t, inf.Nodes.GetStore().List(), 4)
	require.Len(t, inf.Leases.GetStore().List(), 4)
	n, ok := inf.Nodes.GetIndexer().GetByKey("node-b1")
	require.True(t, ok)
	require.Equal(t, "zone-b", n.Labels[api.ZoneLabel])
	require.True(t, isReady(n))
	pods, err := inf.PodsOnNode("node-a1")
	require.NoError(t, err)
	kinds := map[string]int{}
	for _, p := range pods {
		require.Equal(t, corev1.PodRunning, p.Status.Phase, "posted through /status")
		kinds[p.Labels[KindLabel]]++
		if p.Labels[KindLabel] == string(PodTolerating) {
			require.Equal(t, int64(7), *p.Spec.Tolerations[0].TolerationSeconds)
		}
		if p.Labels[KindLabel] == string(PodDaemon) {
			require.Equal(t, "DaemonSet", p.OwnerReferences[0].Kind)
		}
	}
	require.Equal(t, map[string]int{"daemon": 1, "plain": 1, "tolerating": 1}, kinds)
	require.ErrorIs(t, sim.Stop("node-z9"), ErrUnknownNode)

	runCtx, stopRun := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- sim.Run(runCtx) }()
	defer func() { stopRun(); require.NoError(t, <-done) }()

	// twoRounds waits until node-b0 has been renewed twice more: rounds
	// run one after another and renew each node once, so the second of
	// those renewals belongs to a round that started after the round in
	// flight at the call had ended (a time offset would not say that: one
	// round delayed on a loaded machine can be later than any offset).
	twoRounds := func(what string) {
		for range 2 {
			last := sim.LastHeartbeat("node-b0")
			apitest.WaitFor(ctx, t, what, func() bool { return sim.LastHeartbeat("node-b0").After(last) })
		}
	}
	require.NoError(t, sim.Stop("node-a0"))
	twoRounds("two rounds of node-b0")
	// Any renewal of node-a0 in flight at Stop has landed by now.
	stoppedAt := sim.LastHeartbeat("node-a0")
	twoRounds("two more rounds of node-b0")
	require.Equal(t, stoppedAt, sim.LastHeartbeat("node-a0"))
	require.NoError(t, sim.Resume("node-a0"))
	apitest.WaitFor(ctx, t, "node-a0 renewing again", func() bool { return sim.LastHeartbeat("node-a0").After(stoppedAt) })

	unknown, err := api.Mutate(ctx, c, api.Nodes, "", "node-a1", func() *corev1.Node { return &corev1.Node{} },
		func(n *corev1.Node) (bool, error) {
			n.Status.Conditions[0].Status = corev1.ConditionUnknown
			n.Status.Conditions[0].LastTransitionTime = metav1.Now()
			return true, nil
		})
	require.NoError(t, err)
	unknownRV, err := strconv.ParseInt(unknown.ResourceVersion, 10, 64)
	require.NoError(t, err)
	apitest.WaitFor(ctx, t, "node-a1 Ready again after Unknown", func() bool {
		n, ok := inf.Nodes.GetIndexer().GetByKey("node-a1")
		rv, _ := strconv.ParseInt(n.ResourceVersion, 10, 64)
		return ok && rv > unknownRV && isReady(n) && n.Status.Conditions[0].Reason == "KubeletReady"
	})
}

// TestRunOnFakeClock: on a fake clock Run renews only when the clock
// reaches a round, writes the clock's time as renewTime, and is quiet
// only once the round due has been done; a round missed by a long step
// is skipped, not made up.
func TestRunOnFakeClock(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := apitest.Start(t, etcdServer.Client, apitest.Options{}).Client
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := workqueuetest.NewFakeClock(start)
	sim, err := New(Config{Client: c, Zones: 1, NodesPerZone: 2, RenewInterval: time.Second, Clock: clock})
	require.NoError(t, err)
	require.NoError(t, sim.Setup(ctx))
	require.True(t, sim.LastHeartbeat("node-a0").Equal(start))
	require.False(t, sim.Quiet(), "not running")

	runCtx, stopRun := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- sim.Run(runCtx) }()
	defer func() { stopRun(); require.NoError(t, <-done) }()
	apitest.WaitFor(ctx, t, "Run armed", sim.Quiet)

	clock.Step(999 * time.Millisecond)
	require.True(t, sim.Quiet(), "no round due yet")
	clock.Step(time.Millisecond)
	require.False(t, sim.Quiet(), "a round due")
	apitest.WaitFor(ctx, t, "the round at 1 s done", sim.Quiet)
	at := start.Add(time.Second)
	for _, n := range sim.Nodes() {
		require.True(t, sim.LastHeartbeat(n).Equal(at), n)
		var l coordinationv1.Lease
		require.NoError(t, c.Get(ctx, api.Leases, api.LeaseNamespace, n, &l))
		require.True(t, l.Spec.RenewTime.Time.Equal(at), "%s renewTime %s", n, l.Spec.RenewTime)
	}

	clock.Step(2500 * time.Millisecond) // past the rounds at 2 s and 3 s
	apitest.WaitFor(ctx, t, "one round done", sim.Quiet)
	require.True(t, sim.LastHeartbeat("node-a0").Equal(start.Add(3500*time.Millisecond)))
	clock.Step(400 * time.Millisecond) // 3.9 s: the next round is at 4 s
	require.True(t, sim.Quiet())
	clock.Step(100 * time.Millisecond)
	require.False(t, sim.Quiet())
	apitest.WaitFor(ctx, t, "the round at 4 s done", sim.Quiet)
	require.True(t, sim.LastHeartbeat("node-a0").Equal(start.Add(4*time.Second)))
}
