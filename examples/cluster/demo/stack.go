// Package demo runs the cluster example: a Stack (embedded etcd, the API
// server, simulated nodes and kubelets, a scheduler and two replicas of
// the controller manager) and the narrated, self-checking scenario of
// make demo-cluster, driven by the real kubectl.
package demo

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/examples/cluster/controllers"
	"github.com/listwatch/listwatch/examples/cluster/kubelet"
	"github.com/listwatch/listwatch/examples/internal/demorun"
	"github.com/listwatch/listwatch/examples/nodelifecycle/api"
	nodecontroller "github.com/listwatch/listwatch/examples/nodelifecycle/controller"
	"github.com/listwatch/listwatch/examples/nodelifecycle/simulator"
	"github.com/listwatch/listwatch/server"
	"github.com/listwatch/listwatch/transport"
)

// Options size the cluster and time it. Zero values take DefaultOptions'.
type Options struct {
	// ClusterOptions are the nodes, their timing, where the cluster serves
	// and stores, the steps' timeout and the report callbacks (from
	// either controller manager replica).
	demorun.ClusterOptions
	// StartDelay is how long a bound pod takes to become Running and Ready.
	StartDelay time.Duration
	// LeaseDuration, RenewDeadline and RetryPeriod time the controller
	// manager's leader election.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// Bookmarks is how often the API server's watches send bookmarks
	// (a new leader waits for one to know its caches are fresh).
	Bookmarks time.Duration
	// Workers is each controller's concurrency.
	Workers int
	// NoControllerManager leaves the controller manager out: something
	// else runs it (the benchmark runs it in a process of its own, to
	// measure it alone). StartReplica's ElectionKey is then the one to use.
	NoControllerManager bool
	// Metrics, when set, gets the API server's request metrics
	// (apiserver_request_total, ...).
	Metrics *prometheus.Registry
	// Logger receives the components' logs; nil means their errors only,
	// to standard error.
	Logger *slog.Logger
}

// DefaultOptions are the demo's: 2 zones of 3 nodes, pods running 200 ms
// after binding, node periods and the election's scaled down about 10
// times from Kubernetes' defaults.
var DefaultOptions = Options{ClusterOptions: demorun.ClusterOptions{Zones: 2, NodesPerZone: 3,
	Renew: 250 * time.Millisecond, Grace: 2 * time.Second, Monitor: 200 * time.Millisecond, StepTimeout: 60 * time.Second},
	StartDelay: 200 * time.Millisecond, LeaseDuration: 3 * time.Second, RenewDeadline: 2 * time.Second,
	RetryPeriod: 500 * time.Millisecond, Bookmarks: 200 * time.Millisecond, Workers: 5}

// withDefaults fills zero fields from DefaultOptions.
func (o Options) withDefaults() Options {
	d := DefaultOptions
	o.ClusterOptions = o.ClusterOptions.WithDefaults(d.ClusterOptions)
	demorun.Default(&o.Workers, d.Workers)
	demorun.Default(&o.StartDelay, d.StartDelay)
	demorun.Default(&o.LeaseDuration, d.LeaseDuration)
	demorun.Default(&o.RenewDeadline, d.RenewDeadline)
	demorun.Default(&o.RetryPeriod, d.RetryPeriod)
	demorun.Default(&o.Bookmarks, d.Bookmarks)
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	}
	return o
}

// Replica is one controller manager process.
type Replica struct {
	// Name is its identity.
	Name string
	// CM is the replica.
	CM *controllers.ControllerManager

	cancel context.CancelFunc
	done   chan struct{}
	err    error
}

// Killed reports whether the replica was stopped.
func (r *Replica) Killed() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// Stack is a running cluster: etcd, the API server and a client of it
// (the embedded demorun.Stack), and the parts below.
type Stack struct {
	*demorun.Stack
	// Options are the options in effect.
	Options Options
	// Sim runs the nodes' heartbeats; Kubelets run their pods.
	Sim      *simulator.Simulator
	Kubelets *kubelet.Kubelets
	// Scheduler binds pods.
	Scheduler *controllers.Scheduler
	// Replicas are the controller manager's two replicas.
	Replicas [2]*Replica
	// View is an observer's informers (the scenario's checks read them).
	View *Informers

	// replicaHTTP, when set, is the HTTP client of the controller manager
	// replicas started from then on (a test's slow network).
	replicaHTTP *http.Client
}

// Start starts a cluster; Close stops it.
func Start(ctx context.Context, o Options) (*Stack, error) {
	o = o.withDefaults()
	// 429s sent again after their Retry-After, and no client-side rate
	// limit: the cluster's components are measured against the server's
	// own load shedding.
	rt, err := transport.New(transport.Config{Base: &http.Transport{MaxIdleConnsPerHost: 64}, QPS: -1})
	if err != nil {
		return nil, err
	}
	cfg := o.StackConfig()
	cfg.Transport, cfg.Server.Logger = rt, o.Logger
	cfg.Server.Cacher = func(_ api.Kind, c *cacher.Config) { c.BookmarkInterval = o.Bookmarks }
	cfg.Server.Edit = func(c *server.Config) { c.Metrics = o.Metrics }
	s := &Stack{Options: o}
	if _, err := demorun.StartStack(ctx, cfg, s.start); err != nil {
		return nil, err
	}
	return s, nil
}

// start starts the parts on base in order.
func (s *Stack) start(ctx context.Context, base *demorun.Stack) error {
	s.Stack = base
	o := s.Options
	// The nodes: heartbeats and leases (nodelifecycle's simulator) and
	// pods (the kubelets), over one set of informers.
	agents, err := api.NewInformers(s.Client)
	if err != nil {
		return err
	}
	if s.Sim, err = simulator.New(simulator.Config{Client: s.Client, Zones: o.Zones, NodesPerZone: o.NodesPerZone,
		RenewInterval: o.Renew, Nodes: agents.Nodes, Workers: 32}); err != nil {
		return err
	}
	if err := s.Sim.Setup(ctx); err != nil {
		return err
	}
	if s.Kubelets, err = kubelet.New(kubelet.Config{Client: s.Client, Informers: agents, StartDelay: o.StartDelay,
		Running: func(n string) bool { return !s.Sim.Stopped(n) }, Logger: o.Logger}); err != nil {
		return err
	}
	s.StartInformers(agents.Factory)
	s.Go("simulator", s.Sim.Run)
	s.Go("kubelets", s.Kubelets.Run)

	// The scheduler, a process of its own.
	schedInf, err := api.NewInformers(s.Client)
	if err != nil {
		return err
	}
	if s.Scheduler, err = controllers.NewScheduler(controllers.SchedulerConfig{Client: s.Client, Informers: schedInf,
		Logger: o.Logger}); err != nil {
		return err
	}
	s.StartInformers(schedInf.Factory)
	s.Go("scheduler", s.Scheduler.Run)

	// The observer's view.
	if s.View, err = NewInformers(s.Client); err != nil {
		return err
	}
	s.StartInformers(s.View.Factory)

	// Two controller manager replicas; the first to be elected leads.
	if !o.NoControllerManager {
		for i := range s.Replicas {
			if err := s.startReplica(i); err != nil {
				return err
			}
		}
	}
	syncCtx, stop := context.WithTimeout(ctx, o.StepTimeout)
	defer stop()
	if err := s.WaitForSync(syncCtx, o.StepTimeout); err != nil || o.NoControllerManager {
		return err
	}
	select {
	case <-s.Replicas[0].CM.Manager.Elected():
	case <-s.Replicas[1].CM.Manager.Elected():
	case <-syncCtx.Done():
		return errors.New("demo: no controller manager replica was elected")
	}
	return nil
}

// ManagerConfig is the configuration of the stack's controller manager
// replica named name, with o's timing, on the API at client and etcd at
// etcd.
func ManagerConfig(o Options, client *api.Client, etcd *clientv3.Client, name string) controllers.ManagerConfig {
	o = o.withDefaults()
	return controllers.ManagerConfig{API: client, Etcd: etcd,
		ElectionKey: o.Prefix + "-leader/kube-controller-manager", Identity: name, LeaseDuration: o.LeaseDuration,
		RenewDeadline: o.RenewDeadline, RetryPeriod: o.RetryPeriod, Workers: o.Workers, Monitor: o.Monitor, Grace: o.Grace,
		Rates:   nodecontroller.Rates{Normal: 10, Secondary: 10, LargeClusterThreshold: 50, UnhealthyZoneThreshold: 0.55},
		OnEvent: o.OnEvent, OnEvict: o.OnEvict, Logger: o.Logger}
}

// startReplica starts controller manager replica i.
func (s *Stack) startReplica(i int) error {
	name := fmt.Sprintf("controller-manager-%d", i)
	cfg := ManagerConfig(s.Options, s.Client, s.Etcd, name)
	cfg.HTTPClient = s.replicaHTTP
	cm, err := controllers.NewControllerManager(cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(s.Context())
	r := &Replica{Name: name, CM: cm, cancel: cancel, done: make(chan struct{})}
	s.Replicas[i] = r
	s.Go(name, func(context.Context) error {
		defer close(r.done)
		r.err = cm.Run(ctx)
		return nil // a replica ends when it is killed: no failure of the stack
	})
	return nil
}

// Leader returns the index of the replica that leads (-1: none).
func (s *Stack) Leader() int {
	for i, r := range s.Replicas {
		if r != nil && !r.Killed() && r.CM.Manager.IsLeader() {
			return i
		}
	}
	return -1
}

// Kill stops replica i as a crash would: its controllers stop at once,
// its election lease is left to expire.
func (s *Stack) Kill(i int) {
	s.Replicas[i].cancel()
	<-s.Replicas[i].done
}
