package manager_test

import (
	"context"
	"fmt"
	"time"

	"github.com/listwatch/listwatch/client"
	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/manager"
	"github.com/listwatch/listwatch/reflector/controller"
)

// Example runs a Widget controller under a Manager with leader election on
// an embedded etcd: once elected, it reconciles the Widget that exists,
// read through the manager's client (from its cache).
func Example() {
	srv, err := embedtest.StartServer(embedtest.Options{})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	kinds, err := client.NewKinds(widget.Scheme)
	if err != nil {
		panic(err)
	}
	m, err := manager.New(manager.Options{
		Name:           "widget-controllers",
		Kinds:          kinds,
		Etcd:           srv.Client,
		LeaderElection: &manager.LeaderElection{Key: "/leader/widget-controllers", LeaseDuration: 2 * time.Second},
	})
	if err != nil {
		panic(err)
	}
	if err := m.GetClient().Create(ctx, widget.NewWidget("default", "w1")); err != nil {
		panic(err)
	}
	informer, err := m.GetCache().InformerFor(&widget.Widget{})
	if err != nil {
		panic(err)
	}
	reconciled := make(chan string, 1)
	c, err := controller.New(controller.Options{
		Name: "widgets",
		Reconciler: controller.ReconcileFunc(func(ctx context.Context, req controller.Request) (controller.Result, error) {
			var w widget.Widget
			if err := m.GetClient().Get(ctx, req.NamespacedName, &w); err != nil {
				return controller.Result{}, client.IgnoreNotFound(err) // deleted meanwhile: nothing to do
			}
			select {
			case reconciled <- fmt.Sprintf("reconciled %s, replicas %d", req, w.Spec.Replicas):
			default:
			}
			return controller.Result{}, nil
		}),
	})
	if err != nil {
		panic(err)
	}
	if err := c.Watch(controller.Kind(informer, nil)); err != nil {
		panic(err)
	}
	if err := m.Add(c); err != nil {
		panic(err)
	}

	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- m.Run(runCtx) }()
	<-m.Elected()
	fmt.Println("leader:", m.IsLeader())
	fmt.Println(<-reconciled)
	stop()
	fmt.Println("stopped:", <-done)
	// Output:
	// leader: true
	// reconciled default/w1, replicas 0
	// stopped: <nil>
}
