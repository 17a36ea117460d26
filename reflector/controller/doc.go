// Package controller runs Reconcilers in the style of controller-runtime,
// over the informers of package reflector.
//
// A Controller takes events from Sources, turns them into Requests
// (namespace/name of the object to reconcile) in a rate-limited work queue
// (reflector/workqueue), and calls Reconcile for each Request from
// MaxConcurrentReconciles workers.
//
// # Contract
//
//   - Level-triggered: many events for one object that arrive before it is
//     reconciled give one Reconcile; Reconcile must read the current state.
//   - Never concurrent per object: a Request is not reconciled by two
//     workers at once; an event during its Reconcile gives exactly one more.
//   - Outcome of Reconcile: an error is retried with the RateLimiter's
//     backoff (the Result is then ignored), except a TerminalError, which is
//     not retried; Result.RequeueAfter reconciles again after that delay and
//     resets the backoff; Result.Requeue retries with backoff; plain success
//     resets the backoff. A panic is recovered and counts as an error
//     (Options.RecoverPanic, on by default).
//   - Nothing is silent: a failed Reconcile is logged (Options.Logger,
//     slog.Default() when nil) with the controller's name, the object and
//     the error, a recovered panic with its stack; with
//     Options.Registerer, controller_runtime_reconcile_total{result},
//     ..._errors_total, ..._panics_total, ..._time_seconds and the work
//     queue's workqueue_* metrics are recorded per controller.
//   - Start(ctx) starts the sources, waits for all of them to sync (at most
//     CacheSyncTimeout, 2 minutes by default: then ErrCacheSyncTimeout),
//     runs the workers until ctx ends, then stops handing out work, waits
//     for the Reconciles in progress and returns; every goroutine it
//     started has ended by then.
//
// Sources are built with Kind from any Informer (reflector's
// SharedIndexInformer, or controllertest.FakeInformer in tests), an
// EventHandler (EnqueueRequestForObject by default, or
// EnqueueRequestsFromMapFunc) and Predicates (GenerationChanged,
// LabelsChanged, NewPredicate, ...).
//
// # Use
//
//	c, err := controller.New(controller.Options{
//		Name:                    "widgets",
//		Reconciler:              controller.ReconcileFunc(reconcileWidget),
//		MaxConcurrentReconciles: 4,
//	})
//	if err != nil {
//		return err
//	}
//	if err := c.Watch(controller.Kind(widgetInformer, nil,
//		controller.GenerationChanged[*Widget]())); err != nil {
//		return err
//	}
//	return c.Start(ctx) // blocks until ctx ends
package controller
