package rollout

import (
	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// Kubernetes' defaults for a Deployment's optional fields (kube-apiserver
// sets them on create; the example's server does not default, so the
// controller reads every Deployment through Defaulted).
const (
	DefaultReplicas                = int32(1)
	DefaultRevisionHistoryLimit    = int32(10)
	DefaultProgressDeadlineSeconds = int32(600)
)

// DefaultMaxSurge and DefaultMaxUnavailable are the rolling update's
// defaults: 25% each.
var (
	DefaultMaxSurge       = intstr.FromString("25%")
	DefaultMaxUnavailable = intstr.FromString("25%")
)

// Defaulted returns a copy of d with Kubernetes' defaults in its unset
// fields: one replica, the RollingUpdate strategy with 25% surge and 25%
// unavailable, ten revisions of history and a 600 s progress deadline.
func Defaulted(d *appsv1.Deployment) *appsv1.Deployment {
	d = d.DeepCopy()
	s := &d.Spec
	if s.Replicas == nil {
		r := DefaultReplicas
		s.Replicas = &r
	}
	if s.Strategy.Type == "" {
		s.Strategy.Type = appsv1.RollingUpdateDeploymentStrategyType
	}
	if s.Strategy.Type == appsv1.RollingUpdateDeploymentStrategyType {
		if s.Strategy.RollingUpdate == nil {
			s.Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{}
		}
		if s.Strategy.RollingUpdate.MaxSurge == nil {
			v := DefaultMaxSurge
			s.Strategy.RollingUpdate.MaxSurge = &v
		}
		if s.Strategy.RollingUpdate.MaxUnavailable == nil {
			v := DefaultMaxUnavailable
			s.Strategy.RollingUpdate.MaxUnavailable = &v
		}
	}
	if s.RevisionHistoryLimit == nil {
		v := DefaultRevisionHistoryLimit
		s.RevisionHistoryLimit = &v
	}
	if s.ProgressDeadlineSeconds == nil {
		v := DefaultProgressDeadlineSeconds
		s.ProgressDeadlineSeconds = &v
	}
	return d
}

// replicas is *p, 0 for nil.
func replicas(p *int32) int32 {
	if p == nil {
		return 0
	}
	return *p
}
