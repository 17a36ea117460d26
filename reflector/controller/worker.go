package controller

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/listwatch/listwatch/reflector/workqueue"
)

// processNext reconciles one Request from queue. It returns false when the
// worker should exit: the queue is shut down or ctx has ended (a Request
// handed out after that is dropped, not reconciled).
func (c *Controller) processNext(ctx context.Context, queue *workqueue.RateLimitingQueue[Request]) bool {
	req, shutdown := queue.Get()
	if shutdown {
		return false
	}
	defer queue.Done(req)
	if ctx.Err() != nil {
		return false
	}
	c.handle(ctx, queue, req)
	return true
}

// handle runs Reconcile for req and applies its outcome to the queue:
//
//   - error: requeue with backoff, unless it is a TerminalError (then
//     forget it); the Result is ignored; an error once the controller is
//     stopping is logged at Info (the reconcile saw its context end), not
//     as a failure;
//   - Result.RequeueAfter > 0: forget the backoff, requeue after that long;
//   - Result.Requeue: requeue with backoff;
//   - otherwise: forget the backoff.
func (c *Controller) handle(ctx context.Context, queue *workqueue.RateLimitingQueue[Request], req Request) {
	start := time.Now()
	res, panicked, err := c.reconcile(ctx, req)
	c.metrics.observe(resultOf(res, err), time.Since(start), panicked)
	switch {
	case err != nil && ctx.Err() != nil:
		// The controller is stopping: an error now is most likely the
		// reconcile seeing its context end, not a failure worth an alarm.
		// The queue is shutting down, so it is not requeued.
		c.log.Info("reconcile ended by the controller's stop",
			"namespace", req.Namespace, "name", req.Name, "err", err)
	case err != nil && errors.Is(err, ErrTerminal):
		queue.Forget(req)
		c.log.Error("reconcile failed with a terminal error, not requeued",
			"namespace", req.Namespace, "name", req.Name, "err", err)
	case err != nil:
		queue.AddRateLimited(req)
		c.log.Error("reconcile failed, requeued with backoff",
			"namespace", req.Namespace, "name", req.Name, "err", err, "failures", queue.NumRequeues(req))
	case res.RequeueAfter > 0:
		queue.Forget(req)
		queue.AddAfter(req, res.RequeueAfter)
		c.log.Debug("reconciled, requeued after a delay",
			"namespace", req.Namespace, "name", req.Name, "after", res.RequeueAfter)
	case res.Requeue:
		queue.AddRateLimited(req)
		c.log.Debug("reconciled, requeued with backoff", "namespace", req.Namespace, "name", req.Name)
	default:
		queue.Forget(req)
		c.log.Debug("reconciled", "namespace", req.Namespace, "name", req.Name)
	}
}

// reconcile calls the Reconciler, turning a panic into an error when
// RecoverPanic is on.
func (c *Controller) reconcile(ctx context.Context, req Request) (res Result, panicked bool, err error) {
	if c.recoverPanic {
		defer func() {
			if r := recover(); r != nil {
				panicked = true
				c.log.Error("reconcile panicked", "namespace", req.Namespace, "name", req.Name,
					"panic", fmt.Sprint(r), "stack", string(debug.Stack()))
				res, err = Result{}, fmt.Errorf("%w: %v", ErrReconcilePanic, r)
			}
		}()
	}
	res, err = c.reconciler.Reconcile(ctx, req)
	return res, false, err
}

// resultOf is the result label of a Reconcile's outcome.
func resultOf(res Result, err error) string {
	switch {
	case err != nil:
		return ResultError
	case res.RequeueAfter > 0:
		return ResultRequeueAfter
	case res.Requeue:
		return ResultRequeue
	}
	return ResultSuccess
}
