// Command demo-nodes runs the node lifecycle example: a scripted,
// self-checking scenario (the default), or with -serve a cluster that keeps
// running for kubectl, driven by commands on standard input.
package main

import (
	"context"
	"flag"
	"os"

	"github.com/listwatch/listwatch/examples/internal/demorun"
	"github.com/listwatch/listwatch/examples/nodelifecycle/demo"
)

func main() {
	o := demo.DefaultOptions
	fs := flag.NewFlagSet("demo-nodes", flag.ExitOnError)
	o.AddFlags(fs)
	fs.IntVar(&o.PodsPerNode, "pods-per-node", o.PodsPerNode, "pods per node")
	fs.Int64Var(&o.TolerationSeconds, "toleration-seconds", o.TolerationSeconds, "tolerationSeconds of the first tolerating pod of each node")
	fs.Float64Var(&o.Rates.Normal, "eviction-rate", o.Rates.Normal, "nodes tainted per second per zone (Normal, or fully disrupted)")
	fs.Float64Var(&o.Rates.Secondary, "secondary-eviction-rate", o.Rates.Secondary, "rate of a partially disrupted zone larger than -large-cluster-size-threshold")
	fs.IntVar(&o.Rates.LargeClusterThreshold, "large-cluster-size-threshold", o.Rates.LargeClusterThreshold, "zone size above which partial disruption keeps the secondary rate")
	fs.Float64Var(&o.Rates.UnhealthyZoneThreshold, "unhealthy-zone-threshold", o.Rates.UnhealthyZoneThreshold, "share of not-Ready nodes from which a zone is partially disrupted")
	demorun.Main(fs, "keep the cluster running for kubectl; read commands (stop|resume <node|zone|all>, status) on stdin",
		func(ctx context.Context, serve bool) error {
			if serve {
				return demo.Serve(ctx, os.Stdout, os.Stdin, o)
			}
			return demo.Run(ctx, os.Stdout, o)
		})
}
