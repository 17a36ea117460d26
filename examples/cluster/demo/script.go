package demo

import (
	"context"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/examples/cluster/rollout"
	"github.com/listwatch/listwatch/examples/internal/demorun"
)

// script is the state the steps share.
type script struct {
	ctx context.Context
	s   *Stack
	r   *demorun.Narrator
}

// await polls cond, which reads memory only (the observer's informers),
// until it holds or the step times out.
func (sc *script) await(what string, cond func() bool) error {
	return demorun.Await(sc.ctx, sc.s.Options.StepTimeout, what, cond)
}

// deployment returns the observer's copy of ns/name (nil when unknown).
func (sc *script) deployment(ns, name string) *appsv1.Deployment {
	d, _ := sc.s.View.Deployments.GetIndexer().GetByKey(ns + "/" + name)
	return d
}

// rolledOut reports whether ns/name has n replicas, all updated and
// available, and its status observed its last change: what kubectl
// rollout status waits for.
func (sc *script) rolledOut(ns, name string, n int32) bool {
	d := sc.deployment(ns, name)
	if d == nil || d.Spec.Replicas == nil || *d.Spec.Replicas != n {
		return false
	}
	return rollout.Complete(d, d.Status)
}

// replicaSetsOf returns the ReplicaSets controlled by ns/name.
func (sc *script) replicaSetsOf(ns, name string) []*appsv1.ReplicaSet {
	d := sc.deployment(ns, name)
	if d == nil {
		return nil
	}
	return sc.s.View.ReplicaSetsOf(string(d.UID))
}

// podsOf returns the pods of ns/name's ReplicaSets.
func (sc *script) podsOf(ns, name string) []*corev1.Pod {
	var out []*corev1.Pod
	for _, rs := range sc.replicaSetsOf(ns, name) {
		out = append(out, sc.s.View.PodsOf(string(rs.UID))...)
	}
	return out
}

// podsWithImage counts the pods of ns/name running image.
func (sc *script) podsWithImage(ns, name, image string) int {
	n := 0
	for _, p := range sc.podsOf(ns, name) {
		if len(p.Spec.Containers) > 0 && p.Spec.Containers[0].Image == image {
			n++
		}
	}
	return n
}

// controlledBy reports whether obj's controller has uid.
func controlledBy(obj metav1.Object, uid string) bool {
	ref := metav1.GetControllerOf(obj)
	return ref != nil && string(ref.UID) == uid
}
