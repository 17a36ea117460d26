package rollout

import (
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The reasons of a Deployment's conditions, as Kubernetes words them
// (kubectl rollout status reads ProgressDeadlineExceeded).
const (
	ReasonNewRSCreated           = "NewReplicaSetCreated"
	ReasonFoundNewRS             = "FoundNewReplicaSet"
	ReasonRSUpdated              = "ReplicaSetUpdated"
	ReasonNewRSAvailable         = "NewReplicaSetAvailable"
	ReasonProgressDeadline       = "ProgressDeadlineExceeded"
	ReasonPaused                 = "DeploymentPaused"
	ReasonResumed                = "DeploymentResumed"
	ReasonMinimumAvailable       = "MinimumReplicasAvailable"
	ReasonMinimumUnavailable     = "MinimumReplicasUnavailable"
	messageMinimumAvailable      = "Deployment has minimum availability."
	messageMinimumUnavailable    = "Deployment does not have minimum availability."
	messagePaused                = "Deployment is paused"
	messageResumed               = "Deployment is resumed"
	messageProgressDeadlineFmt   = "ReplicaSet %q has timed out progressing."
	messageRSProgressingFmt      = "ReplicaSet %q is progressing."
	messageRSAvailableFmt        = "ReplicaSet %q has successfully progressed."
	messageNewRSCreatedFmt       = "Created new replica set %q"
	messageFoundNewRSFmt         = "Found new replica set %q"
	messageNoNewRSProgressingFmt = "Deployment %q is progressing."
)

// Condition returns d's condition of type t, nil when it has none.
func Condition(s appsv1.DeploymentStatus, t appsv1.DeploymentConditionType) *appsv1.DeploymentCondition {
	for i := range s.Conditions {
		if s.Conditions[i].Type == t {
			return &s.Conditions[i]
		}
	}
	return nil
}

// SetCondition puts c in s: it replaces the condition of its type, keeping
// that one's lastTransitionTime when the status did not change (and its
// lastUpdateTime too when nothing but the times changed).
func SetCondition(s *appsv1.DeploymentStatus, c appsv1.DeploymentCondition) {
	cur := Condition(*s, c.Type)
	if cur == nil {
		s.Conditions = append(s.Conditions, c)
		return
	}
	if cur.Status == c.Status {
		c.LastTransitionTime = cur.LastTransitionTime
		if cur.Reason == c.Reason && cur.Message == c.Message {
			c.LastUpdateTime = cur.LastUpdateTime
		}
	}
	*cur = c
}

// newCondition is a condition stamped now.
func newCondition(t appsv1.DeploymentConditionType, st corev1.ConditionStatus, reason, msg string, now time.Time) appsv1.DeploymentCondition {
	ts := metav1.NewTime(now)
	return appsv1.DeploymentCondition{Type: t, Status: st, Reason: reason, Message: msg, LastUpdateTime: ts, LastTransitionTime: ts}
}

// Counts is the status arithmetic of a Deployment: the replica counts of
// its ReplicaSets (all of them, newRS possibly nil) and the Available
// condition. The previous status's conditions are carried over. d must be
// Defaulted.
func Counts(d *appsv1.Deployment, all []*appsv1.ReplicaSet, newRS *appsv1.ReplicaSet, now time.Time) appsv1.DeploymentStatus {
	s := appsv1.DeploymentStatus{ObservedGeneration: d.Generation, CollisionCount: d.Status.CollisionCount}
	for _, rs := range all {
		s.Replicas += rs.Status.Replicas
		s.ReadyReplicas += rs.Status.ReadyReplicas
		s.AvailableReplicas += rs.Status.AvailableReplicas
	}
	if newRS != nil {
		s.UpdatedReplicas = newRS.Status.Replicas
	}
	s.UnavailableReplicas = max(0, replicas(d.Spec.Replicas)-s.AvailableReplicas)
	s.Conditions = append([]appsv1.DeploymentCondition(nil), d.Status.Conditions...)
	unavail, _ := MaxUnavailable(d)
	if s.AvailableReplicas >= replicas(d.Spec.Replicas)-unavail {
		SetCondition(&s, newCondition(appsv1.DeploymentAvailable, corev1.ConditionTrue, ReasonMinimumAvailable, messageMinimumAvailable, now))
	} else {
		SetCondition(&s, newCondition(appsv1.DeploymentAvailable, corev1.ConditionFalse, ReasonMinimumUnavailable, messageMinimumUnavailable, now))
	}
	return s
}

// Complete reports whether d's rollout is done in status s: every replica
// updated, available, and no old one left.
func Complete(d *appsv1.Deployment, s appsv1.DeploymentStatus) bool {
	want := replicas(d.Spec.Replicas)
	return s.UpdatedReplicas == want && s.Replicas == want && s.AvailableReplicas == want && s.ObservedGeneration >= d.Generation
}

// progressed reports whether s moved forward from the previous status.
func progressed(prev, s appsv1.DeploymentStatus) bool {
	return s.UpdatedReplicas > prev.UpdatedReplicas || s.ReadyReplicas > prev.ReadyReplicas ||
		s.AvailableReplicas > prev.AvailableReplicas || s.Replicas < prev.Replicas
}

// Progress sets the Progressing condition of status s (from Counts) of d
// (Defaulted), whose previous status is d.Status: Unknown while paused;
// True with NewReplicaSetAvailable once complete; True with
// ReplicaSetUpdated while it moves (created says whether newRS was made
// in this sync: NewReplicaSetCreated); False with
// ProgressDeadlineExceeded when nothing moved for progressDeadlineSeconds.
// It returns how long until the deadline would pass (0: no deadline to
// watch), for the controller to look again then.
func Progress(d *appsv1.Deployment, s *appsv1.DeploymentStatus, newRS *appsv1.ReplicaSet, created bool, now time.Time) time.Duration {
	prev := d.Status
	cur := Condition(*s, appsv1.DeploymentProgressing)
	if d.Spec.Paused {
		SetCondition(s, newCondition(appsv1.DeploymentProgressing, corev1.ConditionUnknown, ReasonPaused, messagePaused, now))
		return 0
	}
	if cur != nil && cur.Reason == ReasonPaused {
		SetCondition(s, newCondition(appsv1.DeploymentProgressing, corev1.ConditionUnknown, ReasonResumed, messageResumed, now))
		cur = Condition(*s, appsv1.DeploymentProgressing)
	}
	name := d.Name
	if newRS != nil {
		name = newRS.Name
	}
	switch {
	case Complete(d, *s):
		SetCondition(s, newCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, ReasonNewRSAvailable,
			fmt.Sprintf(messageRSAvailableFmt, name), now))
		return 0
	case created:
		SetCondition(s, newCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, ReasonNewRSCreated,
			fmt.Sprintf(messageNewRSCreatedFmt, name), now))
	case cur == nil:
		SetCondition(s, newCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, ReasonFoundNewRS,
			fmt.Sprintf(messageFoundNewRSFmt, name), now))
	case progressed(prev, *s) || cur.Reason == ReasonNewRSAvailable:
		// Moving, or a new rollout after a complete one: the clock of the
		// deadline starts again.
		msg := fmt.Sprintf(messageRSProgressingFmt, name)
		if newRS == nil {
			msg = fmt.Sprintf(messageNoNewRSProgressingFmt, d.Name)
		}
		SetCondition(s, newCondition(appsv1.DeploymentProgressing, corev1.ConditionTrue, ReasonRSUpdated, msg, now))
	case cur.Reason == ReasonProgressDeadline:
		return 0
	}
	cur = Condition(*s, appsv1.DeploymentProgressing)
	deadline := cur.LastUpdateTime.Add(time.Duration(replicas(d.Spec.ProgressDeadlineSeconds)) * time.Second)
	if !now.Before(deadline) {
		SetCondition(s, newCondition(appsv1.DeploymentProgressing, corev1.ConditionFalse, ReasonProgressDeadline,
			fmt.Sprintf(messageProgressDeadlineFmt, name), now))
		return 0
	}
	return deadline.Sub(now)
}
