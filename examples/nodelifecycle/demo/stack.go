package demo

import (
	"context"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

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
	// Zones, NodesPerZone and PodsPerNode size the simulated cluster.
	Zones, NodesPerZone, PodsPerNode int
	// Renew is the kubelets' lease renewal interval.
	Renew time.Duration
	// Grace is the controller's grace period, Monitor its monitor period.
	Grace, Monitor time.Duration
	// TolerationSeconds is how long the first tolerating pod of a node
	// tolerates an unreachable node (the next one twice as long).
	TolerationSeconds int64
	// Rates are the zone queues' rate rules.
	Rates controller.Rates
	// Listen is the API server's address ("" = a free loopback port).
	Listen string
	// Client and Prefix, when Client is set, use that etcd below Prefix
	// instead of starting an embedded one.
	Client *clientv3.Client
	// Prefix is the etcd key prefix; "" means "/registry".
	Prefix string
	// StepTimeout bounds each step's wait, on Clock.
	StepTimeout time.Duration
	// Clock is the clock of the simulator, the controllers, the taint
	// manager and the narration; nil is the wall clock. Run steps a clock
	// that has a Step method (a workqueuetest.FakeClock) itself, 50 ms at
	// a time, and only when every part has done what was due and the
	// informers hold every write: each step's wait then ends at the same
	// point of the scenario, on that clock, however slow the machine (a
	// part busy for StepTimeout of real time fails the step). Serve never
	// steps it.
	Clock workqueue.Clock
	// OnEvent and OnEvict, when set, also get the controllers' reports.
	OnEvent func(controller.Event)
	// OnEvict gets the taint manager's evictions.
	OnEvict func(taint.Eviction)
}

// DefaultOptions are the demo's: 3 zones of 4 nodes with 5 pods each,
// every period scaled down about 20 times from Kubernetes' defaults, and
// eviction rates high enough to watch (1 node/s, 0.5 in a large zone's
// partial disruption).
var DefaultOptions = Options{Zones: 3, NodesPerZone: 4, PodsPerNode: 5, Renew: 250 * time.Millisecond,
	Grace: 2 * time.Second, Monitor: 200 * time.Millisecond, TolerationSeconds: 3,
	Rates:       controller.Rates{Normal: 1, Secondary: 0.5, LargeClusterThreshold: 50, UnhealthyZoneThreshold: 0.55},
	StepTimeout: 30 * time.Second}

// withDefaults fills zero fields from DefaultOptions.
func (o Options) withDefaults() Options {
	d := DefaultOptions
	demorun.Default(&o.Zones, d.Zones)
	demorun.Default(&o.NodesPerZone, d.NodesPerZone)
	demorun.Default(&o.PodsPerNode, d.PodsPerNode)
	demorun.Default(&o.Renew, d.Renew)
	demorun.Default(&o.Grace, d.Grace)
	demorun.Default(&o.Monitor, d.Monitor)
	demorun.Default(&o.TolerationSeconds, d.TolerationSeconds)
	demorun.Default(&o.StepTimeout, d.StepTimeout)
	if o.Rates == (controller.Rates{}) {
		o.Rates = d.Rates
	}
	if o.Prefix == "" {
		o.Prefix = "/registry"
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
	if _, err := demorun.StartStack(ctx, demorun.StackConfig{Etcd: s.Options.Client,
		Server: api.ServerConfig{Prefix: s.Options.Prefix, Listen: s.Options.Listen}}, s.start); err != nil {
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
