package rollout

import (
	"slices"

	appsv1 "k8s.io/api/apps/v1"
)

// Scale is one step the controller takes: set RS's spec.replicas to To.
type Scale struct {
	// RS is the ReplicaSet to scale (as read; not modified).
	RS *appsv1.ReplicaSet
	// To is its new spec.replicas.
	To int32
}

// specReplicas sums the spec.replicas of rss.
func specReplicas(rss []*appsv1.ReplicaSet) int32 {
	var n int32
	for _, rs := range rss {
		if rs != nil {
			n += replicas(rs.Spec.Replicas)
		}
	}
	return n
}

// claimedReplicas sums, over rss, the larger of spec.replicas and
// status.replicas: a ReplicaSet just scaled down still has the pods its
// status counts until its controller has deleted them and seen them go.
func claimedReplicas(rss []*appsv1.ReplicaSet) int32 {
	var n int32
	for _, rs := range rss {
		if rs != nil {
			n += max(replicas(rs.Spec.Replicas), rs.Status.Replicas)
		}
	}
	return n
}

// availableReplicas sums the status.availableReplicas of rss.
func availableReplicas(rss []*appsv1.ReplicaSet) int32 {
	var n int32
	for _, rs := range rss {
		if rs != nil {
			n += rs.Status.AvailableReplicas
		}
	}
	return n
}

// NewReplicaSetReplicas is how many replicas the new ReplicaSet should
// have at this step of a rolling update: up to spec.replicas + maxSurge
// in all, never more than spec.replicas in the new one; for Recreate,
// spec.replicas. all holds every ReplicaSet of d, newRS among them.
//
// "In all" counts each ReplicaSet's pods until they are gone (the larger
// of its spec.replicas and status.replicas), so that no more than
// spec.replicas + maxSurge pods are ever alive at once. Kubernetes sums
// spec.replicas alone (and counts terminating pods only with its newer
// podReplacementPolicy TerminationComplete), so there an old
// ReplicaSet's pods, deleted a moment late, can briefly sit beside the
// new ones past the surge.
func NewReplicaSetReplicas(d *appsv1.Deployment, all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet) (int32, error) {
	want := replicas(d.Spec.Replicas)
	if d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType {
		return want, nil
	}
	cur := replicas(newRS.Spec.Replicas)
	if cur >= want {
		return want, nil
	}
	surge, err := MaxSurge(d)
	if err != nil {
		return 0, err
	}
	total := claimedReplicas(all)
	if total >= want+surge {
		return cur, nil // at the ceiling: old replicas must go first
	}
	return cur + min(want+surge-total, want-cur), nil
}

// byCreation orders ReplicaSets oldest first (name breaks ties).
func byCreation(a, b *appsv1.ReplicaSet) int {
	if c := a.CreationTimestamp.Compare(b.CreationTimestamp.Time); c != 0 {
		return c
	}
	if a.Name < b.Name {
		return -1
	}
	if a.Name > b.Name {
		return 1
	}
	return 0
}

// OldReplicaSetsScaleDown is the rolling update's scale-down step: how
// far the old ReplicaSets may shrink while keeping spec.replicas -
// maxUnavailable replicas available. Unavailable old replicas go first
// (they serve nobody), then available ones, oldest ReplicaSet first. all
// holds every ReplicaSet of d (old ones and newRS, which may be nil).
func OldReplicaSetsScaleDown(d *appsv1.Deployment, old []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet, all []*appsv1.ReplicaSet) ([]Scale, error) {
	if specReplicas(old) == 0 {
		return nil, nil
	}
	unavail, err := MaxUnavailable(d)
	if err != nil {
		return nil, err
	}
	minAvailable := replicas(d.Spec.Replicas) - unavail
	var newUnavailable int32
	if newRS != nil {
		newUnavailable = max(0, replicas(newRS.Spec.Replicas)-newRS.Status.AvailableReplicas)
	}
	budget := specReplicas(all) - minAvailable - newUnavailable
	if budget <= 0 {
		return nil, nil
	}
	old = slices.Clone(old)
	slices.SortFunc(old, byCreation)
	target := map[*appsv1.ReplicaSet]int32{}
	for _, rs := range old {
		target[rs] = replicas(rs.Spec.Replicas)
	}
	// Unhealthy first: spec replicas that are not available.
	for _, rs := range old {
		if budget == 0 {
			break
		}
		down := min(budget, max(0, target[rs]-rs.Status.AvailableReplicas))
		target[rs] -= down
		budget -= down
	}
	// Then available ones, as far as availability allows.
	canLose := availableReplicas(all) - minAvailable
	for _, rs := range old {
		if canLose <= 0 {
			break
		}
		down := min(canLose, target[rs])
		target[rs] -= down
		canLose -= down
	}
	var out []Scale
	for _, rs := range old {
		if target[rs] != replicas(rs.Spec.Replicas) {
			out = append(out, Scale{RS: rs, To: target[rs]})
		}
	}
	return out, nil
}

// RecreateScaleDown is Recreate's first phase: every old ReplicaSet with
// replicas goes to zero.
func RecreateScaleDown(old []*appsv1.ReplicaSet) []Scale {
	var out []Scale
	for _, rs := range old {
		if replicas(rs.Spec.Replicas) != 0 {
			out = append(out, Scale{RS: rs, To: 0})
		}
	}
	return out
}

// OldPodsGone reports whether Recreate may start the new replicas: every
// old ReplicaSet is scaled to zero and has observed it with no pods left.
func OldPodsGone(old []*appsv1.ReplicaSet) bool {
	for _, rs := range old {
		if replicas(rs.Spec.Replicas) != 0 || rs.Status.Replicas != 0 || rs.Status.ObservedGeneration < rs.Generation {
			return false
		}
	}
	return true
}
