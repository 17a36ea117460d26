package controller

import (
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/listwatch/examples/nodelifecycle/api"
)

// readyCondition returns n's NodeReady condition, or nil.
func readyCondition(n *corev1.Node) *corev1.NodeCondition {
	for i := range n.Status.Conditions {
		if n.Status.Conditions[i].Type == corev1.NodeReady {
			return &n.Status.Conditions[i]
		}
	}
	return nil
}

// readyStatus is n's NodeReady status; a node without the condition is
// Unknown.
func readyStatus(n *corev1.Node) corev1.ConditionStatus {
	if c := readyCondition(n); c != nil {
		return c.Status
	}
	return corev1.ConditionUnknown
}

// taintKeyFor is the taint key a NodeReady status calls for ("" for True).
func taintKeyFor(s corev1.ConditionStatus) string {
	switch s {
	case corev1.ConditionTrue:
		return ""
	case corev1.ConditionFalse:
		return api.TaintNotReady
	}
	return api.TaintUnreachable
}

// hasTaint reports whether n carries key with effect.
func hasTaint(n *corev1.Node, key string, effect corev1.TaintEffect) bool {
	for _, t := range n.Spec.Taints {
		if t.Key == key && t.Effect == effect {
			return true
		}
	}
	return false
}

// setControllerTaints makes n's taints with effect among the controller's
// keys (unreachable, not-ready) exactly want ("" for none), leaving other
// taints alone. A taint it adds is a copy of added with want's key and
// effect. It reports whether it changed anything.
func setControllerTaints(n *corev1.Node, effect corev1.TaintEffect, want string, added *corev1.Taint) bool {
	changed := false
	out := n.Spec.Taints[:0:0]
	have := false
	for _, t := range n.Spec.Taints {
		ours := t.Key == api.TaintUnreachable || t.Key == api.TaintNotReady
		switch {
		case !ours || t.Effect != effect:
			out = append(out, t)
		case t.Key == want && !have:
			have = true
			out = append(out, t)
		default:
			changed = true
		}
	}
	if want != "" && !have {
		t := *added
		t.Key, t.Effect = want, effect
		if added.TimeAdded != nil {
			at := *added.TimeAdded // not shared: decoding into n must not change added
			t.TimeAdded = &at
		}
		out = append(out, t)
		changed = true
	}
	if changed {
		n.Spec.Taints = out
	}
	return changed
}
