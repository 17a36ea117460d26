package controller

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/examples/nodelifecycle/api"
	"github.com/listwatch/listwatch/examples/nodelifecycle/api/apitest"
)

var (
	unreachableNoSchedule = api.TaintUnreachable + ":NoSchedule"
	unreachableNoExecute  = api.TaintUnreachable + ":NoExecute"
)

// TestUnreachableTaintAndRecover: a node that stops renewing its lease
// gets NodeReady Unknown after the grace period, then the unreachable
// NoSchedule and NoExecute taints; the other nodes are untouched; when its
// heartbeats resume it is Ready again and both taints go.
func TestUnreachableTaintAndRecover(t *testing.T) {
	c := startCluster(t, clusterOptions{zones: 2, nodesPerZone: 3})
	require.NoError(t, c.sim.Stop("node-a0"))
	c.waitFor("node-a0 Unknown and tainted", func() bool {
		ts := c.taints("node-a0")
		return readyStatus(c.node("node-a0")) == corev1.ConditionUnknown &&
			slices.Contains(ts, unreachableNoSchedule) && slices.Contains(ts, unreachableNoExecute)
	})
	require.Equal(t, "NodeStatusUnknown", readyCondition(c.node("node-a0")).Reason)
	for _, n := range c.sim.Nodes()[1:] {
		require.Equal(t, corev1.ConditionTrue, readyStatus(c.node(n)), n)
		require.Empty(t, c.taints(n), n)
	}
	unknown := c.eventsOf(EventNodeUnknown)
	require.Len(t, unknown, 1)
	require.Equal(t, "node-a0", unknown[0].Node)
	require.NotEmpty(t, unknown[0].RV)
	require.GreaterOrEqual(t, unknown[0].Time.Sub(c.sim.LastHeartbeat("node-a0")), testGrace, "not before the grace period")

	require.NoError(t, c.sim.Resume("node-a0"))
	untainted := func() []string {
		var out []string
		for _, e := range c.eventsOf(EventUntainted) {
			out = append(out, e.Node+" "+e.Detail)
		}
		return out
	}
	c.waitFor("node-a0 Ready and untainted", func() bool {
		return readyStatus(c.node("node-a0")) == corev1.ConditionTrue && len(c.taints("node-a0")) == 0 &&
			len(untainted()) == 2 // the events may trail the informer by a moment
	})
	require.ElementsMatch(t, []string{"node-a0 NoSchedule", "node-a0 NoExecute"}, untainted())
	require.Equal(t, StateNormal, c.ctrl.ZoneStates()["zone-a"])
}

// TestZoneAndAllZonesDisruption: a whole zone down is FullDisruption and
// keeps the normal rate, so its nodes are NoExecute-tainted one per
// 1/rate; when every zone is down the controller removes all NoExecute
// taints and stops (rate 0, nodes stay queued); when heartbeats resume it
// leaves that mode and the zones are Normal and untainted again.
func TestZoneAndAllZonesDisruption(t *testing.T) {
	rates := fastRates
	rates.Normal = 4 // one node per 250 ms
	c := startCluster(t, clusterOptions{zones: 2, nodesPerZone: 3, rates: rates})
	zoneA := c.sim.NodesInZone("zone-a")
	require.NoError(t, c.sim.Stop(zoneA...))
	noExecTimes := func() []time.Time {
		var out []time.Time
		for _, e := range c.eventsOf(EventTainted) {
			if e.Detail == unreachableNoExecute {
				out = append(out, e.Time)
			}
		}
		return out
	}
	c.waitFor("zone-a fully disrupted and tainted", func() bool {
		for _, n := range zoneA {
			if !slices.Contains(c.taints(n), unreachableNoExecute) {
				return false
			}
		}
		// The events may trail the informer by a moment.
		return c.ctrl.ZoneStates()["zone-a"] == StateFullDisruption && len(noExecTimes()) == 3
	})
	require.Equal(t, 4.0, c.ctrl.ZoneRate("zone-a"))
	noExec := noExecTimes()
	require.Len(t, noExec, 3)
	slices.SortFunc(noExec, func(a, b time.Time) int { return a.Compare(b) })
	for i := 1; i < len(noExec); i++ {
		require.GreaterOrEqual(t, noExec[i].Sub(noExec[i-1]), 240*time.Millisecond, "zone rate 4/s (250 ms), burst 1")
	}
	require.Equal(t, StateNormal, c.ctrl.ZoneStates()["zone-b"])

	c.sim.StopAll()
	// Every node Unknown with its NoSchedule taint is part of the wait: the
	// NoSchedule reconciler taints the last node to go Unknown concurrently
	// with the monitor pass removing the NoExecute taints, so the informer
	// may show the latter first.
	c.waitFor("all zones disrupted, every node Unknown and NoSchedule-tainted, NoExecute taints gone, nodes queued at rate 0", func() bool {
		for _, n := range c.sim.Nodes() {
			ts := c.taints(n)
			if readyStatus(c.node(n)) != corev1.ConditionUnknown || !slices.Contains(ts, unreachableNoSchedule) ||
				slices.Contains(ts, unreachableNoExecute) {
				return false
			}
		}
		return len(c.eventsOf(EventAllDisrupted)) == 1 && c.ctrl.Queued("zone-a") == 3 && c.ctrl.Queued("zone-b") == 3
	})
	require.Equal(t, 0.0, c.ctrl.ZoneRate("zone-a"))
	require.Equal(t, 0.0, c.ctrl.ZoneRate("zone-b"))

	c.sim.ResumeAll()
	c.waitFor("every node Ready and untainted", func() bool {
		for _, n := range c.sim.Nodes() {
			if readyStatus(c.node(n)) != corev1.ConditionTrue || len(c.taints(n)) > 0 {
				return false
			}
		}
		s := c.ctrl.ZoneStates()
		return s["zone-a"] == StateNormal && s["zone-b"] == StateNormal
	})
	require.Len(t, c.eventsOf(EventAllDisruptedOver), 1)
	require.Equal(t, 4.0, c.ctrl.ZoneRate("zone-b"))
}

// TestAllDisruptedRemovesUnseenTaints: entering the all-zones-down mode
// removes the NoExecute taint of a node whose informer copy does not show
// it yet (a taint pass just added it), and reports only what it removed.
func TestAllDisruptedRemovesUnseenTaints(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	env := apitest.Start(t, etcdServer.Client, apitest.Options{})
	client, inf := env.Client, env.Informers // not started: the test hands the pass its nodes
	var events []Event
	c, err := New(Config{Client: client, Informers: inf, OnEvent: func(e Event) { events = append(events, e) }})
	require.NoError(t, err)
	var seen []*corev1.Node // as the informer shows them: untainted
	for _, name := range []string{"node-a0", "node-a1"} {
		n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{api.ZoneLabel: "zone-a"}}}
		seen = append(seen, n.DeepCopy())
		if name == "node-a0" {
			n.Spec.Taints = []corev1.Taint{{Key: api.TaintUnreachable, Effect: corev1.TaintEffectNoExecute}}
		}
		require.NoError(t, client.Create(ctx, api.Nodes, n))
	}
	c.handleDisruption(ctx, map[string]zoneCount{"zone-a": {notReady: 2}}, seen)

	var got corev1.Node
	require.NoError(t, client.Get(ctx, api.Nodes, "", "node-a0", &got))
	require.Empty(t, got.Spec.Taints)
	var kinds []string
	for _, e := range events {
		kinds = append(kinds, string(e.Kind)+" "+e.Node)
	}
	require.Equal(t, []string{string(EventAllDisrupted) + " ", string(EventUntainted) + " node-a0",
		string(EventZoneState) + " "}, kinds)
}
