package bench

import (
	"context"
	"flag"
	"net/http"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/nodelifecycle/api"
	"github.com/listwatch/listwatch/examples/nodelifecycle/controller"
	"github.com/listwatch/listwatch/examples/nodelifecycle/simulator"
	"github.com/listwatch/listwatch/examples/nodelifecycle/taint"
	"github.com/listwatch/listwatch/reflector"
)

var (
	flagNodes   = flag.Int("nodes.count", 5000, "simulated nodes")
	flagPods    = flag.Int("nodes.pods", 50000, "pods, spread evenly over the nodes")
	flagZones   = flag.Int("nodes.zones", 5, "zones the nodes are spread over")
	flagStopped = flag.Int("nodes.stopped", 250, "nodes whose heartbeats stop (spread over the zones, below the disruption threshold)")
	flagGrace   = flag.Duration("nodes.grace", 20*time.Second, "the controller's grace period; leases renew every grace/4, health is checked every grace/20")
)

// BenchmarkNodeLifecycle primes -nodes.count nodes (with leases) and
// -nodes.pods pods, starts the simulated kubelets, the informers, the node
// lifecycle controller and the taint manager, then stops the heartbeats of
// -nodes.stopped nodes and measures, for each, the time from its last
// lease renewal to the moment the node informer shows its
// node.kubernetes.io/unreachable:NoSchedule taint. That taint is not rate
// limited (the NoExecute one goes through the zone queues at 0.1 node/s,
// Kubernetes' default), so its latency is the controller's detection
// latency: the grace period plus up to one monitor period plus the write.
// It reports p50 and p99 in ms and relative to the grace period, and the
// controller manager's heap (informers, controller, taint manager) as the
// live-heap growth from starting them, after a GC.
func BenchmarkNodeLifecycle(b *testing.B) {
	for range b.N {
		runNodeLifecycle(b)
	}
}

func runNodeLifecycle(b *testing.B) {
	nodes, pods, zones, stopped, grace := *flagNodes, *flagPods, *flagZones, *flagStopped, *flagGrace
	if nodes%zones != 0 || stopped > nodes/2 {
		b.Fatalf("-nodes.count (%d) must be a multiple of -nodes.zones (%d), and -nodes.stopped (%d) at most half of it",
			nodes, zones, stopped)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	etcd := embedtest.Start(b)
	srv, err := api.StartAPIServer(ctx, api.ServerConfig{Client: etcd.Client, Prefix: "/registry"})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = srv.Close() }()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	defer hc.CloseIdleConnections()
	client := api.NewClient(srv.URL, hc)

	sim, err := simulator.New(simulator.Config{Client: client, Zones: zones, NodesPerZone: nodes / zones,
		PodsPerNode: pods / nodes, RenewInterval: grace / 4, TolerationSeconds: int64(grace / time.Second), Workers: 32})
	if err != nil {
		b.Fatal(err)
	}
	primeStart := time.Now()
	if err := sim.Setup(ctx); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(time.Since(primeStart).Seconds(), "prime-s")

	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { stop(); wg.Wait() }()
	wg.Go(func() { _ = sim.Run(runCtx) })

	base := liveHeap()
	inf, err := api.NewInformers(client)
	if err != nil {
		b.Fatal(err)
	}
	var mu sync.Mutex
	taintedAt := map[string]time.Time{}
	unknownAt := map[string]time.Time{}
	if _, err := inf.Nodes.AddEventHandler(reflector.ResourceEventHandlerFuncs[*corev1.Node]{
		UpdateFunc: func(_, n *corev1.Node) {
			now := time.Now()
			mu.Lock()
			defer mu.Unlock()
			if _, seen := unknownAt[n.Name]; !seen && readyUnknown(n) {
				unknownAt[n.Name] = now
			}
			if _, seen := taintedAt[n.Name]; !seen && hasUnreachableNoSchedule(n) {
				taintedAt[n.Name] = now
			}
		}}); err != nil {
		b.Fatal(err)
	}
	leaseSeen := map[string]time.Time{}
	if _, err := inf.Leases.AddEventHandler(reflector.ResourceEventHandlerFuncs[*coordinationv1.Lease]{
		UpdateFunc: func(_, l *coordinationv1.Lease) {
			now := time.Now()
			mu.Lock()
			leaseSeen[l.Name] = now
			mu.Unlock()
		}}); err != nil {
		b.Fatal(err)
	}
	ctrl, err := controller.New(controller.Config{Client: client, Informers: inf, MonitorPeriod: grace / 20,
		GracePeriod: grace, NoScheduleWorkers: 8})
	if err != nil {
		b.Fatal(err)
	}
	tm, err := taint.New(taint.Config{Client: client, Informers: inf})
	if err != nil {
		b.Fatal(err)
	}
	syncStart := time.Now()
	inf.Factory.Start(runCtx)
	defer inf.Factory.Shutdown()
	for _, ok := range inf.Factory.WaitForCacheSync(ctx) {
		if !ok {
			b.Fatal("informers did not sync")
		}
	}
	b.ReportMetric(time.Since(syncStart).Seconds(), "informer-sync-s")
	wg.Go(func() { _ = ctrl.Run(runCtx) })
	wg.Go(func() { _ = tm.Run(runCtx) })
	// Let the controller see every node healthy, and a renewal of every
	// lease after the informers started (a node first seen counts as
	// heartbeating when seen, not at its last renewal), before anything
	// stops.
	waitUntil(ctx, b, 2*grace, "a lease renewal of every node seen", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(leaseSeen) == nodes
	})
	waitUntil(ctx, b, 2*grace, "every zone Normal", func() bool {
		s := ctrl.ZoneStates()
		for _, st := range s {
			if st != controller.StateNormal {
				return false
			}
		}
		return len(s) == zones
	})
	heap := liveHeap() - base
	b.ReportMetric(float64(heap)/(1<<20), "ctrl-heap-MiB")
	b.ReportMetric(float64(heap)/float64(nodes+nodes+pods), "ctrl-heap-B/object")

	// Stop every (nodes/stopped)-th node, so that each zone loses the same
	// share.
	all := sim.Nodes()
	var victims []string
	for i := 0; len(victims) < stopped; i += nodes / stopped {
		victims = append(victims, all[i])
	}
	if err := sim.Stop(victims...); err != nil {
		b.Fatal(err)
	}
	waitUntil(ctx, b, 4*grace, "every stopped node tainted", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(taintedAt) >= len(victims)
	})
	mu.Lock()
	var lat, unknown, seenLag []time.Duration
	for _, n := range victims {
		at, ok := taintedAt[n]
		if !ok {
			b.Fatalf("node %s stopped but not tainted", n)
		}
		last := sim.LastHeartbeat(n)
		lat = append(lat, at.Sub(last))
		unknown = append(unknown, unknownAt[n].Sub(last))
		seenLag = append(seenLag, leaseSeen[n].Sub(last))
	}
	wrong := len(taintedAt) - len(victims)
	mu.Unlock()
	if wrong > 0 {
		b.Errorf("%d heartbeating nodes were tainted unreachable", wrong)
	}
	slices.Sort(lat)
	slices.Sort(unknown)
	slices.Sort(seenLag)
	// How long the informers took to show the victims' last renewals.
	b.ReportMetric(float64(seenLag[len(seenLag)/2].Milliseconds()), "lease-seen-p50-ms")
	b.ReportMetric(float64(seenLag[len(seenLag)-1].Milliseconds()), "lease-seen-max-ms")
	b.ReportMetric(float64(unknown[len(unknown)/2].Milliseconds()), "unknown-p50-ms")
	p50, p99 := lat[len(lat)/2], lat[(len(lat)*99)/100]
	b.ReportMetric(float64(p50.Milliseconds()), "taint-p50-ms")
	b.ReportMetric(float64(p99.Milliseconds()), "taint-p99-ms")
	b.ReportMetric(p50.Seconds()/grace.Seconds(), "p50/grace")
	b.ReportMetric(p99.Seconds()/grace.Seconds(), "p99/grace")
	b.ReportMetric(grace.Seconds(), "grace-s")
}

func hasUnreachableNoSchedule(n *corev1.Node) bool {
	return slices.ContainsFunc(n.Spec.Taints, func(t corev1.Taint) bool {
		return t.Key == api.TaintUnreachable && t.Effect == corev1.TaintEffectNoSchedule
	})
}

func readyUnknown(n *corev1.Node) bool {
	return slices.ContainsFunc(n.Status.Conditions, func(c corev1.NodeCondition) bool {
		return c.Type == corev1.NodeReady && c.Status == corev1.ConditionUnknown
	})
}

// liveHeap is the heap in use after a full collection.
func liveHeap() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// waitUntil polls cond until it holds or limit passes.
func waitUntil(ctx context.Context, b *testing.B, limit time.Duration, what string, cond func() bool) {
	b.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) || ctx.Err() != nil {
			b.Fatalf("no %s within %v", what, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
