package rollout

import (
	"slices"
	"strconv"

	appsv1 "k8s.io/api/apps/v1"
)

// The annotations a Deployment controller keeps on its ReplicaSets and
// Deployments (Kubernetes' names: kubectl rollout history reads them).
const (
	// RevisionAnnotation is the revision of a ReplicaSet's template, and
	// on the Deployment the revision of its current one.
	RevisionAnnotation = "deployment.kubernetes.io/revision"
	// RevisionHistoryAnnotation lists the earlier revisions a ReplicaSet
	// had (a rollback to it gives it a new revision).
	RevisionHistoryAnnotation = "deployment.kubernetes.io/revision-history"
	// DesiredReplicasAnnotation is the Deployment's spec.replicas when it
	// last scaled the ReplicaSet: a difference means a scaling event.
	DesiredReplicasAnnotation = "deployment.kubernetes.io/desired-replicas"
	// MaxReplicasAnnotation is spec.replicas + maxSurge at that time.
	MaxReplicasAnnotation = "deployment.kubernetes.io/max-replicas"
)

// Active returns the ReplicaSets with replicas.
func Active(rss []*appsv1.ReplicaSet) []*appsv1.ReplicaSet {
	var out []*appsv1.ReplicaSet
	for _, rs := range rss {
		if rs != nil && replicas(rs.Spec.Replicas) > 0 {
			out = append(out, rs)
		}
	}
	return out
}

// IsScalingEvent reports whether d's spec.replicas changed since it last
// scaled one of its active ReplicaSets: then the controller scales (see
// ProportionalScale) before it rolls.
func IsScalingEvent(d *appsv1.Deployment, all []*appsv1.ReplicaSet) bool {
	want := strconv.Itoa(int(replicas(d.Spec.Replicas)))
	for _, rs := range Active(all) {
		if v, ok := rs.Annotations[DesiredReplicasAnnotation]; ok && v != want {
			return true
		}
	}
	return false
}

// ProportionalScale is a scaling event's answer (and a paused
// Deployment's only change): with one active ReplicaSet (or none) it
// alone takes spec.replicas; when the new one is saturated the old ones
// go to zero; during a rolling update the change is spread over the
// active ReplicaSets in proportion to their sizes (growth to the newest
// first, shrinking from the oldest), keeping spec.replicas + maxSurge in
// all. newRS may be nil.
func ProportionalScale(d *appsv1.Deployment, newRS *appsv1.ReplicaSet, old []*appsv1.ReplicaSet) ([]Scale, error) {
	want := replicas(d.Spec.Replicas)
	all := append(slices.Clone(old), newRS)
	all = slices.DeleteFunc(all, func(rs *appsv1.ReplicaSet) bool { return rs == nil })
	active := Active(all)
	if len(active) <= 1 {
		target := newRS
		if len(active) == 1 {
			target = active[0]
		} else if target == nil && len(all) > 0 {
			target = slices.MaxFunc(all, byCreation)
		}
		if target == nil || replicas(target.Spec.Replicas) == want {
			return nil, nil
		}
		return []Scale{{RS: target, To: want}}, nil
	}
	if newRS != nil && replicas(newRS.Spec.Replicas) == want && newRS.Status.AvailableReplicas == want {
		return RecreateScaleDown(old), nil
	}
	if d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType {
		return nil, nil
	}
	surge, err := MaxSurge(d)
	if err != nil {
		return nil, err
	}
	total := specReplicas(active)
	delta := want + surge - total
	if want == 0 {
		delta = -total
	}
	if delta == 0 {
		return nil, nil
	}
	slices.SortFunc(active, byCreation)
	if delta > 0 {
		slices.Reverse(active) // growth goes to the newest first
	}
	target := map[*appsv1.ReplicaSet]int32{}
	left := delta
	for _, rs := range active {
		cur := replicas(rs.Spec.Replicas)
		share := int32(int64(delta) * int64(cur) / int64(total))
		if delta < 0 {
			share = max(share, -cur)
		}
		target[rs] = cur + share
		left -= share
	}
	// What rounding left goes to the first in order (newest on growth,
	// oldest on shrinking, as far as it has replicas).
	for _, rs := range active {
		if left == 0 {
			break
		}
		step := left
		if left < 0 {
			step = max(left, -target[rs])
		}
		target[rs] += step
		left -= step
	}
	var out []Scale
	for _, rs := range active {
		if target[rs] != replicas(rs.Spec.Replicas) {
			out = append(out, Scale{RS: rs, To: target[rs]})
		}
	}
	return out, nil
}
