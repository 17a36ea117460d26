package controller

import (
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// nodeHealth is what the controller remembers of one node's heartbeats.
type nodeHealth struct {
	// probe is when the controller last saw a heartbeat, on its own
	// clock.
	probe time.Time
	// heartbeat is the NodeReady condition's lastHeartbeatTime last seen.
	heartbeat metav1.Time
	// renew is the lease's renewTime last seen.
	renew metav1.MicroTime
}

// healthMap holds the nodeHealth of every known node.
type healthMap struct {
	mu    sync.Mutex
	nodes map[string]*nodeHealth
}

func newHealthMap() *healthMap { return &healthMap{nodes: map[string]*nodeHealth{}} }

// observe records what node and its lease (nil if none) show at now and
// returns when the last heartbeat was seen. A node seen for the first time
// counts as heartbeating now.
func (h *healthMap) observe(node *corev1.Node, lease *coordinationv1.Lease, now time.Time) time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	nh := h.nodes[node.Name]
	if nh == nil {
		nh = &nodeHealth{probe: now}
		h.nodes[node.Name] = nh
	}
	if c := readyCondition(node); c != nil && !c.LastHeartbeatTime.Equal(&nh.heartbeat) {
		nh.heartbeat, nh.probe = c.LastHeartbeatTime, now
	}
	if lease != nil && lease.Spec.RenewTime != nil && lease.Spec.RenewTime.After(nh.renew.Time) {
		nh.renew, nh.probe = *lease.Spec.RenewTime, now
	}
	return nh.probe
}

// resetAll makes every known node count as heartbeating at now (when the
// controller leaves the all-zones-down mode).
func (h *healthMap) resetAll(now time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, nh := range h.nodes {
		nh.probe = now
	}
}

// forgetExcept drops the nodes not in keep.
func (h *healthMap) forgetExcept(keep map[string]bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for n := range h.nodes {
		if !keep[n] {
			delete(h.nodes, n)
		}
	}
}
