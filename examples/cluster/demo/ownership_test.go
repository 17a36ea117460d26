package demo

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/listwatch/listwatch/examples/cluster/rollout"
	"github.com/listwatch/listwatch/examples/nodelifecycle/api"
)

// TestAdoptReleaseOrphan: a ReplicaSet adopts an orphan pod its selector
// matches (and keeps its count by deleting one), releases a pod relabelled
// out of its selector (and replaces it), and a Deployment deleted with
// propagationPolicy Orphan leaves its ReplicaSet running without an
// owner.
func TestAdoptReleaseOrphan(t *testing.T) {
	s := startStack(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sc := &script{ctx: ctx, s: s}
	require.NoError(t, s.Client.Create(ctx, api.Deployments, webDeployment(3, "nginx:1")))
	require.NoError(t, sc.await("3 available", func() bool { return sc.rolledOut("default", "web", 3) }))
	rss := sc.replicaSetsOf("default", "web")
	require.Len(t, rss, 1)
	rs := rss[0]
	owned := func() []*corev1.Pod { return s.View.PodsOf(string(rs.UID)) }

	// Adoption: an orphan with the ReplicaSet's labels.
	orphan := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "stray", Namespace: "default", Labels: rs.Spec.Template.Labels},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1"}}}}
	require.NoError(t, s.Client.Create(ctx, api.Pods, orphan))
	var adopted bool
	require.NoError(t, sc.await("the orphan adopted or deleted, 3 pods owned", func() bool {
		p, ok := s.View.Pods.GetIndexer().GetByKey("default/stray")
		if ok && controlledBy(p, string(rs.UID)) {
			adopted = true
		}
		return (adopted || !ok) && len(owned()) == 3 && (!ok || controlledBy(p, string(rs.UID)))
	}))
	require.True(t, adopted || func() bool { _, ok := s.View.Pods.GetIndexer().GetByKey("default/stray"); return !ok }())

	// Release: one owned pod relabelled out of the selector.
	victim := owned()[0]
	patch := []byte(`{"metadata":{"labels":{"app":"debug"}}}`)
	require.NoError(t, s.Client.Patch(ctx, api.Pods, "default", victim.Name, "", types.MergePatchType, patch, nil))
	require.NoError(t, sc.await("the pod released and replaced", func() bool {
		p, ok := s.View.Pods.GetIndexer().GetByKey("default/" + victim.Name)
		return ok && metav1.GetControllerOf(p) == nil && len(owned()) == 3 && sc.rolledOut("default", "web", 3)
	}))

	// Orphaning: the Deployment goes, its ReplicaSet stays without owner.
	orphanPolicy := metav1.DeletePropagationOrphan
	require.NoError(t, s.Client.DeleteWith(ctx, api.Deployments, "default", "web", metav1.DeleteOptions{PropagationPolicy: &orphanPolicy}))
	require.NoError(t, sc.await("the Deployment gone, its ReplicaSet orphaned", func() bool {
		_, dOK := s.View.Deployments.GetIndexer().GetByKey("default/web")
		r, rOK := s.View.ReplicaSets.GetIndexer().GetByKey("default/" + rs.Name)
		return !dOK && rOK && metav1.GetControllerOf(r) == nil
	}))
	require.Len(t, owned(), 3, "the orphaned ReplicaSet keeps its pods")
	var left appsv1.ReplicaSet
	require.NoError(t, s.Client.Get(ctx, api.ReplicaSets, "default", rs.Name, &left))
	require.Equal(t, int32(3), *left.Spec.Replicas)
	require.NotEmpty(t, left.Annotations[rollout.RevisionAnnotation])
}
