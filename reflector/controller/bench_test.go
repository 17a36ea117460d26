package controller_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/reflector/controller"
)

// BenchmarkControllerThroughput measures one event (an update of one of
// 1,000 distinct objects) through predicates-free Kind source, work queue
// and a no-op Reconcile, for 1 and 4 workers. Events for an object that is
// still queued fold into one reconcile, so reconciles/s is reported next
// to events/s.
func BenchmarkControllerThroughput(b *testing.B) {
	objs := make([]*widget.Widget, 1000)
	for i := range objs {
		objs[i] = testWidget("bench", fmt.Sprintf("obj-%05d", i), 1)
	}
	for _, workers := range []int{1, 4} {
		b.Run(fmt.Sprintf("workers=%d", workers), func(b *testing.B) {
			var reconciles atomic.Int64
			c, err := controller.New(controller.Options{
				Name:                    "bench",
				MaxConcurrentReconciles: workers,
				Reconciler: controller.ReconcileFunc(func(context.Context, controller.Request) (controller.Result, error) {
					reconciles.Add(1)
					return controller.Result{}, nil
				}),
			})
			if err != nil {
				b.Fatal(err)
			}
			inf := &widgetInformer{}
			inf.SetSynced(true)
			if err := c.Watch(controller.Kind(inf, nil)); err != nil {
				b.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- c.Start(ctx) }()
			if err := inf.WaitForHandlers(ctx, 1); err != nil {
				b.Fatal(err)
			}

			b.ReportAllocs()
			i := 0
			for b.Loop() {
				o := objs[i%len(objs)]
				inf.Update(o, o)
				i++
			}
			b.StopTimer()
			elapsed := b.Elapsed().Seconds()
			cancel()
			if err := <-done; err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(float64(i)/elapsed, "events/s")
			b.ReportMetric(float64(reconciles.Load())/elapsed, "reconciles/s")
		})
	}
}
