package manager_test

import (
	"context"
	"fmt"
	"time"

	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/manager"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/reflector/controller"
	"github.com/listwatch/listwatch/storage/etcd3"
)

// Example runs a Widget controller under a Manager with leader election on
// an embedded etcd: once elected, it reconciles the Widget that exists.
func Example() {
	srv, err := embedtest.StartServer(embedtest.Options{})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	store, err := etcd3.New(etcd3.Config{Client: srv.Client, Codec: widget.Codec,
		NewFunc: widget.New, NewListFunc: widget.NewList, ResourcePrefix: widget.KeyRoot})
	if err != nil {
		panic(err)
	}
	defer store.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := store.Create(ctx, widget.Key("default", "w1"), widget.NewWidget("default", "w1"), nil, 0); err != nil {
		panic(err)
	}

	m, err := manager.New(manager.Options{
		Name:           "widget-controllers",
		LeaderElection: &manager.LeaderElection{Client: srv.Client, Key: "/leader/widget-controllers", LeaseDuration: 2 * time.Second},
	})
	if err != nil {
		panic(err)
	}
	lw := reflector.NewStorageListerWatcher(store, widget.KeyRoot, widget.NewList, "")
	informer, err := reflector.InformerFor[*widget.Widget](m.Informers(), widget.Resource, lw)
	if err != nil {
		panic(err)
	}
	reconciled := make(chan string, 1)
	c, err := controller.New(controller.Options{
		Name: "widgets",
		Reconciler: controller.ReconcileFunc(func(ctx context.Context, req controller.Request) (controller.Result, error) {
			w, ok := informer.GetStore().GetByKey(req.String())
			if !ok {
				return controller.Result{}, nil // deleted meanwhile: nothing to do
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
