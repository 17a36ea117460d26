package demo

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/examples/nodelifecycle/api"
)

// webDeployment is what kubectl create deployment web --image=image
// --replicas=n posts.
func webDeployment(n int32, image string) *appsv1.Deployment {
	lbl := map[string]string{"app": "web"}
	return &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", Labels: lbl},
		Spec: appsv1.DeploymentSpec{Replicas: &n, Selector: &metav1.LabelSelector{MatchLabels: lbl},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: lbl},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: image}}}}}}
}

// TestDeploymentBecomesAvailable: a Deployment created through the API
// gets a ReplicaSet, its pods are bound and run, and its status reaches
// every replica available with the rollout complete.
func TestDeploymentBecomesAvailable(t *testing.T) {
	s := startStack(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, s.Client.Create(ctx, api.Deployments, webDeployment(6, "nginx:1")))
	sc := &script{ctx: ctx, s: s}
	require.NoError(t, sc.await("6 available", func() bool { return sc.rolledOut("default", "web", 6) }))
	pods := sc.podsOf("default", "web")
	require.Len(t, pods, 6)
	for _, p := range pods {
		require.NotEmpty(t, p.Spec.NodeName)
		require.Equal(t, corev1.PodRunning, p.Status.Phase)
	}
}

// deploymentT is the Deployment type, for api.Mutate.
type deploymentT = appsv1.Deployment

// newDeployment returns an empty Deployment.
func newDeployment() *appsv1.Deployment { return &appsv1.Deployment{} }
