package controller_test

import (
	"context"
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/listwatch/listwatch/reflector/controller"
	"github.com/listwatch/listwatch/reflector/controller/controllertest"
)

func Example() {
	// A real program passes a reflector.SharedIndexInformer here.
	informer := &controllertest.FakeInformer[*unstructured.Unstructured]{}
	informer.SetSynced(true)

	reconciled := make(chan struct{})
	c, err := controller.New(controller.Options{
		Name: "widgets",
		Reconciler: controller.ReconcileFunc(func(ctx context.Context, req controller.Request) (controller.Result, error) {
			fmt.Println("reconcile", req)
			reconciled <- struct{}{}
			return controller.Result{}, nil
		}),
	})
	if err != nil {
		panic(err)
	}
	// Reconcile every Widget labelled tier=web, keyed by its own name.
	webOnly := controller.NewPredicate(func(u *unstructured.Unstructured) bool {
		return u.GetLabels()["tier"] == "web"
	})
	if err := c.Watch(controller.Kind(informer, nil, webOnly)); err != nil {
		panic(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error)
	go func() { stopped <- c.Start(ctx) }()
	if err := informer.WaitForHandlers(ctx, 1); err != nil {
		panic(err)
	}

	widget := func(name, tier string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetNamespace("default")
		u.SetName(name)
		u.SetLabels(map[string]string{"tier": tier})
		return u
	}
	informer.Add(widget("frontend", "web"), true)
	informer.Add(widget("database", "db"), true) // filtered out
	<-reconciled
	informer.Update(widget("frontend", "web"), widget("frontend", "web"))
	<-reconciled

	cancel()
	fmt.Println("stopped:", <-stopped)
	// Output:
	// reconcile default/frontend
	// reconcile default/frontend
	// stopped: <nil>
}

func ExampleTerminalError() {
	err := fmt.Errorf("widget default/x: %w", controller.TerminalError(fmt.Errorf("spec.size must be positive")))
	fmt.Println(err)
	fmt.Println(errors.Is(err, controller.ErrTerminal))
	// Output:
	// widget default/x: terminal error: spec.size must be positive
	// true
}
