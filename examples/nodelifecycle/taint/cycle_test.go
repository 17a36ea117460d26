package taint

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/listwatch/examples/nodelifecycle/api"
	"github.com/listwatch/listwatch/examples/nodelifecycle/api/apitest"
	"github.com/listwatch/listwatch/examples/nodelifecycle/controller"
	"github.com/listwatch/listwatch/examples/nodelifecycle/simulator"
)

// TestTaintEvictRecover runs the simulator, the node lifecycle controller
// and the taint manager together on the real clock with scaled-down
// periods (grace 2 s, tolerationSeconds 3 s). A node that stops
// heartbeating is tainted; its plain pods are evicted, its tolerating pods
// only after their tolerationSeconds from the taint, its daemon pod never;
// other nodes keep all their pods. A second node stops and resumes before
// its tolerating pods' time: its taint goes and their pending evictions
// are cancelled.
func TestTaintEvictRecover(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	env := apitest.Start(t, etcdServer.Client, apitest.Options{})
	env.StartInformers(t)
	c, inf := env.Client, env.Informers
	sim, err := simulator.New(simulator.Config{Client: c, Zones: 2, NodesPerZone: 3, PodsPerNode: 4,
		RenewInterval: 100 * time.Millisecond, TolerationSeconds: 3, Nodes: inf.Nodes, Workers: 4})
	require.NoError(t, err)
	require.NoError(t, sim.Setup(ctx))
	var mu sync.Mutex
	tainted := map[string]time.Time{}
	var evictions []Eviction
	ctrl, err := controller.New(controller.Config{Client: c, Informers: inf, MonitorPeriod: 100 * time.Millisecond,
		GracePeriod: 2 * time.Second, TaintPeriod: 20 * time.Millisecond,
		Rates: controller.Rates{Normal: 50, Secondary: 5, LargeClusterThreshold: 50, UnhealthyZoneThreshold: 0.55},
		OnEvent: func(e controller.Event) {
			if e.Kind == controller.EventTainted && e.Detail == api.TaintUnreachable+":NoExecute" {
				mu.Lock()
				tainted[e.Node] = e.Time
				mu.Unlock()
			}
		}})
	require.NoError(t, err)
	tm, err := New(Config{Client: c, Informers: inf, Workers: 4,
		OnEvict: func(e Eviction) { mu.Lock(); evictions = append(evictions, e); mu.Unlock() }})
	require.NoError(t, err)
	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { _ = sim.Run(runCtx) })
	wg.Go(func() { require.NoError(t, ctrl.Run(runCtx)) })
	wg.Go(func() { require.NoError(t, tm.Run(runCtx)) })
	defer func() { stop(); wg.Wait() }()

	podsOf := func(node string) map[string]bool {
		pods, err := inf.PodsOnNode(node)
		require.NoError(t, err)
		out := map[string]bool{}
		for _, p := range pods {
			out[p.Labels[simulator.KindLabel]] = true
		}
		return out
	}
	countOf := func(node string) int {
		pods, err := inf.PodsOnNode(node)
		require.NoError(t, err)
		return len(pods)
	}

	require.NoError(t, sim.Stop("node-a0"))
	apitest.WaitFor(ctx, t, "node-a0's plain pods evicted, tolerating pods pending", func() bool {
		k := podsOf("node-a0")
		return !k["plain"] && k["tolerating"] && k["daemon"]
	})
	apitest.WaitFor(ctx, t, "node-a0's tolerating pods evicted", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return !podsOf("node-a0")["tolerating"] && len(evictions) == 3 // the callback may trail the informer
	})
	require.Equal(t, map[string]bool{"daemon": true}, podsOf("node-a0"))
	mu.Lock()
	taintedAt := tainted["node-a0"]
	for _, e := range evictions {
		require.Equal(t, "node-a0", e.Node)
		if e.Waited > 0 {
			require.Equal(t, 3*time.Second, e.Waited)
			require.GreaterOrEqual(t, e.Time.Sub(taintedAt), 3*time.Second, "tolerationSeconds counted from the taint")
		}
	}
	require.Len(t, evictions, 3)
	mu.Unlock()
	for _, n := range slices.DeleteFunc(sim.Nodes(), func(n string) bool { return n == "node-a0" || n == "node-b1" }) {
		require.Equal(t, 4, countOf(n), n)
	}

	// node-b1: stop, wait for its taint and plain evictions, resume at once.
	require.NoError(t, sim.Stop("node-b1"))
	apitest.WaitFor(ctx, t, "node-b1's plain pods evicted, tolerating pods pending", func() bool {
		k := podsOf("node-b1")
		return !k["plain"] && k["tolerating"] && tm.Pending() == 1
	})
	require.NoError(t, sim.Resume("node-b1"))
	apitest.WaitFor(ctx, t, "node-b1 untainted and its evictions cancelled", func() bool {
		n, ok := inf.Nodes.GetIndexer().GetByKey("node-b1")
		return ok && len(n.Spec.Taints) == 0 && tm.Pending() == 0
	})
	require.Equal(t, map[string]bool{"daemon": true, "tolerating": true}, podsOf("node-b1"))
	n, _ := inf.Nodes.GetIndexer().GetByKey("node-b1")
	require.Equal(t, corev1.ConditionTrue, n.Status.Conditions[0].Status)
}
