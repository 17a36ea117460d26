package demo

import (
	"context"
	"time"

	"github.com/listwatch/listwatch/examples/internal/demorun"
	"github.com/listwatch/listwatch/examples/nodelifecycle/api"
	"github.com/listwatch/listwatch/examples/nodelifecycle/controller"
	"github.com/listwatch/listwatch/examples/nodelifecycle/simulator"
	"github.com/listwatch/listwatch/examples/nodelifecycle/taint"
	"github.com/listwatch/listwatch/reflector/workqueue"
)

// Options size the cluster and scale its timing. Zero values take the
// defaults of DefaultOptions.
type Options struct {
	// ClusterOptions are the nodes, their timing, where the cluster serves
	// and stores, the steps' timeout and the report callbacks.
	demorun.ClusterOptions
	// PodsPerNode is how many pods each node runs.
	PodsPerNode int
	// TolerationSeconds is how long the first tolerating pod of a node
	// tolerates an unreachable node (the next one twice as long).
	TolerationSeconds int64
	// Rates are the zone queues' rate rules.
	Rates controller.Rates
	// Clock is the clock of the simulator, the controllers, the taint
	// manager and the narration; nil is the wall clock. Run steps a clock
	// that has a Step method (a workqueuetest.FakeClock) itself, 50 ms at
	// a time, and only when every part has done what was due and the
	// informers hold every write: each step's wait then ends at the same
	// point of the scenario, on that clock, however slow the machine (a
	// part busy for StepTimeout of real time fails the step). Serve never
	// steps it.
	Clock workqueue.Clock
}

// DefaultOptions are the demo's: 3 zones of 4 nodes with 5 pods each,
// every period scaled down about 20 times from Kubernetes' defaults, and
// eviction rates high enough to watch (1 node/s, 0.5 in a large zone's
// partial disruption).
var DefaultOptions = Options{ClusterOptions: demorun.ClusterOptions{Zones: 3, NodesPerZone: 4,
	Renew: 250 * time.Millisecond, Grace: 2 * time.Second, Monitor: 200 * time.Millisecond, StepTimeout: 30 * time.Second},
	PodsPerNode: 5, TolerationSeconds: 3,
	Rates: controller.Rates{Normal: 1, Secondary: 0.5, LargeClusterThreshold: 50, UnhealthyZoneThreshold: 0.55}}

// withDefaults fills zero fields from DefaultOptions.
func (o Options) withDefaults() Options {
	d := DefaultOptions
	o.ClusterOptions = o.ClusterOptions.WithDefaults(d.ClusterOptions)
	demorun.Default(&o.PodsPerNode, d.PodsPerNode)
	demorun.Default(&o.TolerationSeconds, d.TolerationSeconds)
	if o.Rates == (controller.Rates{}) {
		o.Rates = d.Rates
	}
	if o.Clock == nil {
		o.Clock = workqueue.RealClock{}
	}
	return o
}

// Stack is a running cluster: etcd, API server and client (the embedded
// demorun.Stack), simulator, informers, node lifecycle controller and
// taint manager.
type Stack struct {
	*demorun.Stack
	// Options are the options in effect.
	Options Options
	// Informers are the controller manager's shared informers.
	Informers *api.Informers
	// Sim, Controller and Taints are the simulator and the controllers.
	Sim        *simulator.Simulator
	Controller *controller.Controller
	Taints     *taint.Manager
}

// Start starts a cluster, creates its nodes, leases and pods, and starts
// the controllers; Close stops it.
func Start(ctx context.Context, o Options) (*Stack, error) {
	s := &Stack{Options: o.withDefaults()}
	if _, err := demorun.StartStack(ctx, s.Options.StackConfig(), s.start); err != nil {
		return nil, err
	}
	return s, nil
}

// start builds the parts on base and starts them.
func (s *Stack) start(ctx context.Context, base *demorun.Stack) (err error) {
	s.Stack = base
	o := s.Options
	if s.Informers, err = api.NewInformers(s.Client); err != nil {
		return err
	}
	if s.Sim, err = simulator.New(simulator.Config{Client: s.Client, Zones: o.Zones, NodesPerZone: o.NodesPerZone,
		PodsPerNode: o.PodsPerNode, RenewInterval: o.Renew, TolerationSeconds: o.TolerationSeconds,
		Nodes: s.Informers.Nodes, Workers: 32, Clock: o.Clock}); err != nil {
		return err
	}
	if err := s.Sim.Setup(ctx); err != nil {
		return err
	}
	if s.Controller, err = controller.New(controller.Config{Client: s.Client, Informers: s.Informers,
		MonitorPeriod: o.Monitor, GracePeriod: o.Grace, Rates: o.Rates, OnEvent: o.OnEvent, Clock: o.Clock}); err != nil {
		return err
	}
	if s.Taints, err = taint.New(taint.Config{Client: s.Client, Informers: s.Informers, OnEvict: o.OnEvict, Clock: o.Clock}); err != nil {
		return err
	}
	s.StartInformers(s.Informers.Factory)
	s.Go("simulator", s.Sim.Run)
	s.Go("node lifecycle controller", s.Controller.Run)
	s.Go("taint manager", s.Taints.Run)
	return s.WaitForSync(ctx, o.StepTimeout)
}
