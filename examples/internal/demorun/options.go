package demorun

import (
	"flag"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/listwatch/listwatch/examples/nodelifecycle/api"
	"github.com/listwatch/listwatch/examples/nodelifecycle/controller"
	"github.com/listwatch/listwatch/examples/nodelifecycle/taint"
)

// ClusterOptions are the options every demo cluster has, embedded in each
// example's Options: its simulated nodes and their timing, where it
// serves and stores, how long a step may wait, and who else hears the
// node lifecycle controller and the taint manager.
type ClusterOptions struct {
	// Zones and NodesPerZone size the simulated cluster.
	Zones, NodesPerZone int
	// Renew is the kubelets' lease renewal interval; Grace and Monitor
	// the node lifecycle controller's grace and monitor periods.
	Renew, Grace, Monitor time.Duration
	// Listen is the API server's address ("": a free loopback port).
	Listen string
	// Client, when set, is the etcd to store in (below Prefix) instead of
	// an embedded one.
	Client *clientv3.Client
	// Prefix is the etcd key prefix; "" means "/registry".
	Prefix string
	// StepTimeout bounds each of the scenario's waits.
	StepTimeout time.Duration
	// OnEvent, when set, also gets the node lifecycle controller's
	// reports.
	OnEvent func(controller.Event)
	// OnEvict, when set, also gets the taint manager's evictions.
	OnEvict func(taint.Eviction)
}

// AddFlags registers c's fields that a demo command sets on fs, with c's
// values as defaults.
func (c *ClusterOptions) AddFlags(fs *flag.FlagSet) {
	fs.IntVar(&c.Zones, "zones", c.Zones, "zones")
	fs.IntVar(&c.NodesPerZone, "nodes-per-zone", c.NodesPerZone, "nodes per zone")
	fs.DurationVar(&c.Renew, "lease-renew", c.Renew, "kubelet lease renewal interval")
	fs.DurationVar(&c.Grace, "grace-period", c.Grace, "node monitor grace period")
	fs.DurationVar(&c.Monitor, "monitor-period", c.Monitor, "node monitor period")
	fs.StringVar(&c.Listen, "listen", "", "API server address (default: a free loopback port)")
}

// WithDefaults fills c's zero fields from d, and Prefix with "/registry".
func (c ClusterOptions) WithDefaults(d ClusterOptions) ClusterOptions {
	Default(&c.Zones, d.Zones)
	Default(&c.NodesPerZone, d.NodesPerZone)
	Default(&c.Renew, d.Renew)
	Default(&c.Grace, d.Grace)
	Default(&c.Monitor, d.Monitor)
	Default(&c.StepTimeout, d.StepTimeout)
	if c.Prefix == "" {
		c.Prefix = "/registry"
	}
	return c
}

// StackConfig is the StackConfig of a stack storing and serving where c
// says.
func (c ClusterOptions) StackConfig() StackConfig {
	return StackConfig{Etcd: c.Client, Server: api.ServerConfig{Prefix: c.Prefix, Listen: c.Listen}}
}

// Default sets *v to def when *v is zero or negative: how a demo's
// Options take their defaults field by field.
func Default[T int | int64 | float64 | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}
