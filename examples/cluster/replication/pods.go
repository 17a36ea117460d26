package replication

import (
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// IsActive reports whether a pod counts towards its ReplicaSet: not being
// deleted, not finished.
func IsActive(p *corev1.Pod) bool {
	return p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
}

// readyCondition is p's Ready condition, nil when it has none.
func readyCondition(p *corev1.Pod) *corev1.PodCondition {
	for i := range p.Status.Conditions {
		if p.Status.Conditions[i].Type == corev1.PodReady {
			return &p.Status.Conditions[i]
		}
	}
	return nil
}

// IsReady reports whether p's Ready condition is True.
func IsReady(p *corev1.Pod) bool {
	c := readyCondition(p)
	return c != nil && c.Status == corev1.ConditionTrue
}

// IsAvailable reports whether p has been Ready for minReadySeconds at now.
func IsAvailable(p *corev1.Pod, minReadySeconds int32, now time.Time) bool {
	c := readyCondition(p)
	if c == nil || c.Status != corev1.ConditionTrue {
		return false
	}
	return minReadySeconds == 0 || !c.LastTransitionTime.IsZero() &&
		c.LastTransitionTime.Add(time.Duration(minReadySeconds)*time.Second).Before(now)
}

// Status is rs's status for its active pods at now (conditions kept).
func Status(rs *appsv1.ReplicaSet, active []*corev1.Pod, now time.Time) appsv1.ReplicaSetStatus {
	s := appsv1.ReplicaSetStatus{Replicas: int32(len(active)), ObservedGeneration: rs.Generation,
		Conditions: rs.Status.Conditions}
	tmpl := labels.SelectorFromSet(rs.Spec.Template.Labels)
	for _, p := range active {
		if tmpl.Matches(labels.Set(p.Labels)) {
			s.FullyLabeledReplicas++
		}
		if IsReady(p) {
			s.ReadyReplicas++
			if IsAvailable(p, rs.Spec.MinReadySeconds, now) {
				s.AvailableReplicas++
			}
		}
	}
	return s
}

// NextAvailableCheck is how long until a ready pod of rs that is not yet
// available becomes so (0: none is waiting): the controller looks again
// then, since no watch event will say it.
func NextAvailableCheck(rs *appsv1.ReplicaSet, active []*corev1.Pod, now time.Time) time.Duration {
	if rs.Spec.MinReadySeconds == 0 {
		return 0
	}
	var next time.Duration
	for _, p := range active {
		c := readyCondition(p)
		if c == nil || c.Status != corev1.ConditionTrue || IsAvailable(p, rs.Spec.MinReadySeconds, now) {
			continue
		}
		d := c.LastTransitionTime.Add(time.Duration(rs.Spec.MinReadySeconds)*time.Second).Sub(now) + time.Millisecond
		if next == 0 || d < next {
			next = d
		}
	}
	return next
}

// podRank orders pods by how cheap they are to delete: unscheduled before
// scheduled, pending before unknown before running, not ready before
// ready, ready for less time before longer, newer before older.
func podRank(a, b *corev1.Pod) int {
	if (a.Spec.NodeName == "") != (b.Spec.NodeName == "") {
		if a.Spec.NodeName == "" {
			return -1
		}
		return 1
	}
	phase := map[corev1.PodPhase]int{corev1.PodPending: 0, corev1.PodUnknown: 1, corev1.PodRunning: 2}
	if pa, pb := phase[a.Status.Phase], phase[b.Status.Phase]; pa != pb {
		return pa - pb
	}
	if ra, rb := IsReady(a), IsReady(b); ra != rb {
		if !ra {
			return -1
		}
		return 1
	}
	if IsReady(a) {
		ta, tb := readyCondition(a).LastTransitionTime, readyCondition(b).LastTransitionTime
		if c := tb.Compare(ta.Time); c != 0 {
			return c // ready more recently first
		}
	}
	if c := b.CreationTimestamp.Compare(a.CreationTimestamp.Time); c != 0 {
		return c
	}
	if a.Name > b.Name {
		return -1
	}
	if a.Name < b.Name {
		return 1
	}
	return 0
}

// PodsToDelete returns the n pods of pods to delete first.
func PodsToDelete(pods []*corev1.Pod, n int) []*corev1.Pod {
	pods = slices.Clone(pods)
	slices.SortFunc(pods, podRank)
	return pods[:min(n, len(pods))]
}

// NewPod is a pod of rs's template, named after rs by the server
// (generateName), controlled by rs.
func NewPod(rs *appsv1.ReplicaSet) *corev1.Pod {
	t := rs.Spec.Template.DeepCopy()
	p := &corev1.Pod{ObjectMeta: t.ObjectMeta, Spec: t.Spec}
	p.Name, p.Namespace, p.GenerateName = "", rs.Namespace, rs.Name+"-"
	p.ResourceVersion, p.UID = "", ""
	p.OwnerReferences = []metav1.OwnerReference{ControllerRef(rs, "apps/v1", "ReplicaSet")}
	return p
}
