package controller

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/examples/nodelifecycle/api"
)

// monitor checks every node's health once, queues or removes NoExecute
// taints, and reassesses the zones.
func (c *Controller) monitor(ctx context.Context) {
	now := c.clock.Now()
	inf := c.cfg.Informers
	nodes := inf.Nodes.GetStore().List()
	counts := map[string]zoneCount{}
	seen := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		seen[n.Name] = true
		zone := n.Labels[api.ZoneLabel]
		lease, _ := inf.Leases.GetIndexer().GetByKey(api.LeaseNamespace + "/" + n.Name)
		probe := c.health.observe(n, lease, now)
		status := readyStatus(n)
		if now.Sub(probe) > c.cfg.GracePeriod && (status != corev1.ConditionUnknown || readyCondition(n) == nil) {
			if updated, err := c.markUnknown(ctx, n.Name, now); err != nil {
				c.log.Warn("cannot set NodeReady Unknown", "node", n.Name, "err", err)
			} else {
				n, status = updated, readyStatus(updated)
			}
		}
		cnt := counts[zone]
		if status == corev1.ConditionTrue {
			cnt.ready++
		} else {
			cnt.notReady++
		}
		counts[zone] = cnt
		c.processNoExecute(ctx, n, status)
	}
	c.health.forgetExcept(seen)
	c.handleDisruption(ctx, counts, nodes)
}

// markUnknown sets node's NodeReady to Unknown, as the controller does for
// a node that stopped heartbeating.
func (c *Controller) markUnknown(ctx context.Context, node string, now time.Time) (*corev1.Node, error) {
	changedAt := metav1.NewTime(now)
	changed := false
	n, err := api.Mutate(ctx, c.cfg.Client, api.Nodes, "", node, func() *corev1.Node { return &corev1.Node{} },
		func(n *corev1.Node) (bool, error) {
			cond := readyCondition(n)
			if cond == nil {
				n.Status.Conditions = append(n.Status.Conditions, corev1.NodeCondition{Type: corev1.NodeReady,
					Status: corev1.ConditionUnknown, Reason: "NodeStatusNeverUpdated",
					Message: "Kubelet never posted node status.", LastTransitionTime: changedAt})
				changed = true
				return true, nil
			}
			if cond.Status == corev1.ConditionUnknown {
				return false, nil
			}
			cond.Status, cond.Reason, cond.Message = corev1.ConditionUnknown, "NodeStatusUnknown", "Kubelet stopped posting node status."
			cond.LastTransitionTime = changedAt
			changed = true
			return true, nil
		})
	if err != nil || !changed {
		return n, err
	}
	c.emit(Event{Time: now, Kind: EventNodeUnknown, Node: node, Zone: n.Labels[api.ZoneLabel],
		Detail: "NodeReady=Unknown", RV: n.ResourceVersion})
	return n, nil
}

// processNoExecute queues a not-Ready node for its NoExecute taint (or
// swaps unreachable and not-ready at once when it has the other one), and
// removes the taints of a Ready node.
func (c *Controller) processNoExecute(ctx context.Context, n *corev1.Node, status corev1.ConditionStatus) {
	q := c.queue(n.Labels[api.ZoneLabel])
	want := taintKeyFor(status)
	if want == "" {
		q.remove(n.Name)
		if hasTaint(n, api.TaintUnreachable, corev1.TaintEffectNoExecute) || hasTaint(n, api.TaintNotReady, corev1.TaintEffectNoExecute) {
			c.setTaints(ctx, n.Name, corev1.TaintEffectNoExecute, c.clock.Now())
		}
		return
	}
	if hasTaint(n, want, corev1.TaintEffectNoExecute) {
		return
	}
	other := api.TaintUnreachable
	if want == api.TaintUnreachable {
		other = api.TaintNotReady
	}
	if hasTaint(n, other, corev1.TaintEffectNoExecute) {
		c.setTaints(ctx, n.Name, corev1.TaintEffectNoExecute, c.clock.Now())
		return
	}
	q.add(n.Name)
}

// setTaints makes node's controller taints of effect match its current
// NodeReady (none when Ready) and reports whether it succeeded; at is the
// time of the decision (taints added carry it).
func (c *Controller) setTaints(ctx context.Context, node string, effect corev1.TaintEffect, at time.Time) bool {
	now := metav1.NewTime(at)
	var want string
	changed := false
	n, err := api.Mutate(ctx, c.cfg.Client, api.Nodes, "", node, func() *corev1.Node { return &corev1.Node{} },
		func(n *corev1.Node) (bool, error) {
			want = taintKeyFor(readyStatus(n))
			changed = setControllerTaints(n, effect, want, &corev1.Taint{TimeAdded: &now})
			return changed, nil
		})
	if err != nil {
		c.log.Warn("cannot set taints", "node", node, "effect", effect, "err", err)
		return false
	}
	if changed {
		e := Event{Time: at, Kind: EventTainted, Node: node, Zone: n.Labels[api.ZoneLabel],
			Detail: want + ":" + string(effect), RV: n.ResourceVersion}
		if want == "" {
			e.Kind, e.Detail = EventUntainted, string(effect)
		}
		c.emit(e)
	}
	return true
}

// taintPass serves the zone queues: each node taken gets the NoExecute
// taint its NodeReady calls for (none if it is Ready again).
func (c *Controller) taintPass(ctx context.Context) {
	c.mu.Lock()
	queues := make([]*zoneQueue, 0, len(c.queues))
	for _, q := range c.queues {
		queues = append(queues, q)
	}
	c.mu.Unlock()
	now := c.clock.Now()
	for _, q := range queues {
		q.try(now, func(node string) (bool, time.Duration) {
			if _, ok := c.cfg.Informers.Nodes.GetIndexer().GetByKey(node); !ok {
				return true, 0
			}
			if !c.setTaints(ctx, node, corev1.TaintEffectNoExecute, now) {
				return false, time.Second
			}
			return true, 0
		})
	}
}

// handleDisruption reassesses the zones from counts and applies the
// plan: rates, and entering or leaving the all-zones-down mode.
func (c *Controller) handleDisruption(ctx context.Context, counts map[string]zoneCount, nodes []*corev1.Node) {
	now := c.clock.Now()
	for z := range counts {
		c.queue(z) // zones seen for the first time get a queue
	}
	c.mu.Lock()
	prev := c.zoneStates
	c.mu.Unlock()
	plan := c.cfg.Rates.planDisruption(prev, counts)
	if plan.enterAllDisrupted {
		c.emit(Event{Time: now, Kind: EventAllDisrupted, Detail: "every zone is fully disrupted: NoExecute taints removed, evictions stop"})
		// Every node, not only those the informer shows tainted: a taint
		// pass may have just tainted one the informer still shows
		// without, and that taint would stay (the queues stop).
		for _, n := range nodes {
			c.queue(n.Labels[api.ZoneLabel]).remove(n.Name)
			c.removeNoExecute(ctx, n.Name)
		}
	}
	if plan.leaveAllDisrupted {
		c.health.resetAll(now)
		c.emit(Event{Time: now, Kind: EventAllDisruptedOver, Detail: "some node is Ready again: grace periods restart"})
	}
	for z, r := range plan.rates {
		c.queue(z).setRate(now, r)
	}
	c.mu.Lock()
	c.zoneStates = plan.states
	c.mu.Unlock()
	for z, s := range plan.states {
		if prev[z] != s {
			c.emit(Event{Time: now, Kind: EventZoneState, Zone: z, Detail: string(s), Rate: c.ZoneRate(z)})
		}
	}
}

// removeNoExecute removes node's controller NoExecute taints, as the API
// server has it, whatever its NodeReady says (nothing is written or
// reported when it has none).
func (c *Controller) removeNoExecute(ctx context.Context, node string) {
	changed := false
	n, err := api.Mutate(ctx, c.cfg.Client, api.Nodes, "", node, func() *corev1.Node { return &corev1.Node{} },
		func(n *corev1.Node) (bool, error) {
			changed = setControllerTaints(n, corev1.TaintEffectNoExecute, "", nil)
			return changed, nil
		})
	if err != nil {
		c.log.Warn("cannot remove NoExecute taints", "node", node, "err", err)
		return
	}
	if !changed {
		return
	}
	c.emit(Event{Time: c.clock.Now(), Kind: EventUntainted, Node: node, Zone: n.Labels[api.ZoneLabel],
		Detail: string(corev1.TaintEffectNoExecute), RV: n.ResourceVersion})
}
