// Command demo-cluster runs the cluster example's scenario with the real
// kubectl: a Deployment created, rolled, undone, scaled, its pods evicted
// from a dead node and replaced, its controller manager's leader killed
// mid-rollout, and deleted with cascade; every step narrated and checked.
// With -serve it keeps the cluster running for kubectl instead.
package main

import (
	"context"
	"flag"
	"os"

	"github.com/listwatch/listwatch/examples/cluster/demo"
	"github.com/listwatch/listwatch/examples/internal/demorun"
)

func main() {
	o, sn := demo.DefaultOptions, demo.DefaultScenario
	fs := flag.NewFlagSet("demo-cluster", flag.ExitOnError)
	fs.IntVar(&sn.Replicas, "replicas", sn.Replicas, "replicas of kubectl create deployment")
	fs.IntVar(&sn.ScaleTo, "scale-to", sn.ScaleTo, "replicas of kubectl scale")
	o.AddFlags(fs)
	fs.DurationVar(&o.StartDelay, "start-delay", o.StartDelay, "time a bound pod takes to become Running and Ready")
	fs.DurationVar(&o.LeaseDuration, "leader-lease", o.LeaseDuration, "controller manager election lease")
	demorun.Main(fs, "keep the cluster running for kubectl instead of playing the scenario",
		func(ctx context.Context, serve bool) error {
			if serve {
				return demo.Serve(ctx, os.Stdout, o)
			}
			return demo.Run(ctx, os.Stdout, o, sn)
		})
}
