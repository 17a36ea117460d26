package controller

import (
	"context"

	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/listwatch/reflector/controller"
)

// reconcileNoSchedule gives a node the NoSchedule taint its NodeReady
// calls for, at once (no rate limit: NoSchedule evicts nothing).
func (c *Controller) reconcileNoSchedule(ctx context.Context, req controller.Request) (controller.Result, error) {
	n, ok := c.cfg.Informers.Nodes.GetIndexer().GetByKey(req.Name)
	if !ok {
		return controller.Result{}, nil
	}
	if !setControllerTaints(n.DeepCopy(), corev1.TaintEffectNoSchedule, taintKeyFor(readyStatus(n)), &corev1.Taint{}) {
		return controller.Result{}, nil
	}
	if !c.setTaints(ctx, req.Name, corev1.TaintEffectNoSchedule, c.clock.Now()) {
		return controller.Result{Requeue: true}, nil
	}
	return controller.Result{}, nil
}
