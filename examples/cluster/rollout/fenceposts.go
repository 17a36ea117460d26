package rollout

import (
	"fmt"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// ResolveFenceposts turns maxSurge and maxUnavailable (absolute numbers
// or percentages of desired) into replica counts: a surge percentage
// rounds up, an unavailable one rounds down, and when both come to zero
// one replica may be unavailable, so that a rollout can always progress.
func ResolveFenceposts(maxSurge, maxUnavailable *intstr.IntOrString, desired int32) (surge, unavailable int32, err error) {
	zero := intstr.FromInt32(0)
	if maxSurge == nil {
		maxSurge = &zero
	}
	if maxUnavailable == nil {
		maxUnavailable = &zero
	}
	s, err := intstr.GetScaledValueFromIntOrPercent(maxSurge, int(desired), true)
	if err != nil {
		return 0, 0, fmt.Errorf("maxSurge: %w", err)
	}
	u, err := intstr.GetScaledValueFromIntOrPercent(maxUnavailable, int(desired), false)
	if err != nil {
		return 0, 0, fmt.Errorf("maxUnavailable: %w", err)
	}
	if s < 0 || u < 0 {
		return 0, 0, fmt.Errorf("maxSurge %d and maxUnavailable %d may not be negative", s, u)
	}
	if s == 0 && u == 0 {
		u = 1
	}
	return int32(s), int32(u), nil
}

// MaxSurge is how many replicas d may run above spec.replicas during a
// rolling update (0 for Recreate). d must be Defaulted.
func MaxSurge(d *appsv1.Deployment) (int32, error) {
	if d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType {
		return 0, nil
	}
	s, _, err := ResolveFenceposts(d.Spec.Strategy.RollingUpdate.MaxSurge, d.Spec.Strategy.RollingUpdate.MaxUnavailable, replicas(d.Spec.Replicas))
	return s, err
}

// MaxUnavailable is how many of d's spec.replicas may be unavailable
// during a rolling update, at most spec.replicas (0 for Recreate). d must
// be Defaulted.
func MaxUnavailable(d *appsv1.Deployment) (int32, error) {
	if d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType || replicas(d.Spec.Replicas) == 0 {
		return 0, nil
	}
	_, u, err := ResolveFenceposts(d.Spec.Strategy.RollingUpdate.MaxSurge, d.Spec.Strategy.RollingUpdate.MaxUnavailable, replicas(d.Spec.Replicas))
	return min(u, replicas(d.Spec.Replicas)), err
}
