package controller

import (
	"context"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/nodelifecycle/api"
	"github.com/listwatch/listwatch/examples/nodelifecycle/api/apitest"
	"github.com/listwatch/listwatch/examples/nodelifecycle/simulator"
	"github.com/listwatch/listwatch/reflector"
)

// etcdServer is the package's one embedded etcd; each test uses its own
// key prefix. RunMain also checks that no goroutine leaked.
var etcdServer *embedtest.Server

func TestMain(m *testing.M) {
	os.Exit(embedtest.RunMain(m, &etcdServer, embedtest.Options{}))
}

// testGrace is the tests' grace period: short, yet long enough that a
// heartbeating node (renewing every 100 ms) never misses it on a loaded
// machine under -race.
const testGrace = 2 * time.Second

// fastRates taint quickly enough for tests.
var fastRates = Rates{Normal: 50, Secondary: 5, LargeClusterThreshold: 50, UnhealthyZoneThreshold: 0.55}

// cluster is an API server, informers, a simulator and a controller
// running on the test's prefix with scaled-down periods.
type cluster struct {
	t      *testing.T
	ctx    context.Context
	api    *api.APIServer
	client *api.Client
	inf    *api.Informers
	sim    *simulator.Simulator
	ctrl   *Controller

	mu     sync.Mutex
	events []Event
}

// clusterOptions adjust a cluster before it starts.
type clusterOptions struct {
	zones, nodesPerZone int
	rates               Rates
	server              api.ServerConfig
	informerOpts        []reflector.InformerOption
}

// startCluster starts everything; the test's cleanup stops it and checks
// that every goroutine ended.
func startCluster(t *testing.T, o clusterOptions) *cluster {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	c := &cluster{t: t, ctx: ctx}
	env := apitest.Start(t, etcdServer.Client, apitest.Options{Server: o.server,
		Informers: append([]reflector.InformerOption{reflector.WithBackoff(wait.Backoff{Duration: 20 * time.Millisecond,
			Factor: 2, Steps: 1 << 30, Cap: 200 * time.Millisecond})}, o.informerOpts...)})
	c.api, c.client, c.inf = env.API, env.Client, env.Informers
	var err error
	c.sim, err = simulator.New(simulator.Config{Client: c.client, Zones: o.zones, NodesPerZone: o.nodesPerZone,
		RenewInterval: 100 * time.Millisecond, Nodes: c.inf.Nodes, Workers: 4})
	require.NoError(t, err)
	require.NoError(t, c.sim.Setup(ctx))
	if o.rates == (Rates{}) {
		o.rates = fastRates
	}
	c.ctrl, err = New(Config{Client: c.client, Informers: c.inf, MonitorPeriod: 100 * time.Millisecond,
		GracePeriod: testGrace, TaintPeriod: 20 * time.Millisecond, Rates: o.rates,
		OnEvent: func(e Event) { c.mu.Lock(); c.events = append(c.events, e); c.mu.Unlock() }})
	require.NoError(t, err)

	env.StartInformers(t)
	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { _ = c.sim.Run(runCtx) })
	wg.Go(func() { require.NoError(t, c.ctrl.Run(runCtx)) })
	t.Cleanup(func() { stop(); wg.Wait() })
	c.waitFor("every zone assessed Normal", func() bool {
		s := c.ctrl.ZoneStates()
		for z := range o.zones {
			if s[simulator.ZoneName(z)] != StateNormal {
				return false
			}
		}
		return true
	})
	return c
}

// waitFor waits for cond (in-memory state only) until the cluster's
// context ends.
func (c *cluster) waitFor(what string, cond func() bool) {
	c.t.Helper()
	apitest.WaitFor(c.ctx, c.t, what, cond)
}

// node returns the informer's copy of name.
func (c *cluster) node(name string) *corev1.Node {
	n, ok := c.inf.Nodes.GetIndexer().GetByKey(name)
	require.True(c.t, ok, name)
	return n
}

// taints returns node's taints as key:effect.
func (c *cluster) taints(name string) []string {
	var out []string
	for _, t := range c.node(name).Spec.Taints {
		out = append(out, t.Key+":"+string(t.Effect))
	}
	return out
}

// eventsOf returns the recorded events of kind.
func (c *cluster) eventsOf(kind EventKind) []Event {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Event
	for _, e := range c.events {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}
