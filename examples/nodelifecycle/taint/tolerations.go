package taint

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// noExecuteTaints returns n's NoExecute taints.
func noExecuteTaints(n *corev1.Node) []corev1.Taint {
	var out []corev1.Taint
	for _, t := range n.Spec.Taints {
		if t.Effect == corev1.TaintEffectNoExecute {
			out = append(out, t)
		}
	}
	return out
}

// forever is the toleration time of a pod that tolerates its taints
// without a bound.
const forever time.Duration = -1

// tolerationTime says how long pod may stay on a node with taints (all
// NoExecute): 0 when some taint is not tolerated (evict now), forever when
// each is tolerated without tolerationSeconds, else the shortest
// tolerationSeconds among the tolerations used (the first toleration that
// matches a taint is the one used for it, as in Kubernetes).
func tolerationTime(tolerations []corev1.Toleration, taints []corev1.Taint) time.Duration {
	result := forever
	for i := range taints {
		j := slices.IndexFunc(tolerations, func(t corev1.Toleration) bool { return tolerates(t, taints[i]) })
		if j < 0 {
			return 0
		}
		s := tolerations[j].TolerationSeconds
		if s == nil {
			continue
		}
		d := max(time.Duration(*s)*time.Second, 0)
		if result == forever || d < result {
			result = d
		}
	}
	return result
}

// tolerates reports whether tol matches taint: same effect unless tol's
// is empty, same key unless tol's is empty, and with operator Exists any
// value, with Equal (or none) the same value. Numeric operators (Lt, Gt)
// are not supported and match nothing.
func tolerates(tol corev1.Toleration, taint corev1.Taint) bool {
	if tol.Effect != "" && tol.Effect != taint.Effect {
		return false
	}
	if tol.Key != "" && tol.Key != taint.Key {
		return false
	}
	switch tol.Operator {
	case corev1.TolerationOpExists:
		return true
	case "", corev1.TolerationOpEqual:
		return tol.Value == taint.Value
	}
	return false
}

// isDaemonPod reports whether p is owned by a DaemonSet.
func isDaemonPod(p *corev1.Pod) bool {
	for _, o := range p.OwnerReferences {
		if o.Kind == "DaemonSet" && o.Controller != nil && *o.Controller {
			return true
		}
	}
	return false
}
