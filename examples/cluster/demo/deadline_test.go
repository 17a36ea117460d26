package demo

import (
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"

	"github.com/listwatch/listwatch/examples/cluster/rollout"
	"github.com/listwatch/listwatch/examples/nodelifecycle/api"
)

// TestProgressDeadlineWithKubectl: a rollout to an image that cannot be
// pulled stops making progress; after progressDeadlineSeconds the
// Deployment's Progressing condition turns False with
// ProgressDeadlineExceeded, kubectl rollout status fails saying so, the
// old pods keep serving (maxUnavailable holds), and kubectl rollout undo
// recovers.
func TestProgressDeadlineWithKubectl(t *testing.T) {
	sc, k := startWithKubectl(t)
	s, ctx := sc.s, sc.ctx
	d := webDeployment(4, "nginx:1")
	deadline := int32(2)
	d.Spec.ProgressDeadlineSeconds = &deadline
	require.NoError(t, s.Client.Create(ctx, api.Deployments, d))
	_, err := k.run(ctx, "rollout", "status", "deployment/web", "--timeout=30s")
	require.NoError(t, err)

	_, err = k.run(ctx, "set", "image", "deployment/web", "nginx=nginx:broken")
	require.NoError(t, err)
	out, err := k.run(ctx, "rollout", "status", "deployment/web", "--timeout=30s")
	require.Error(t, err, "rollout status must fail: %s", out)
	require.Contains(t, err.Error(), "exceeded its progress deadline")
	// kubectl read the condition from the API server; the observer's
	// informer gets it asynchronously.
	require.NoError(t, sc.await("Progressing False with ProgressDeadlineExceeded in the observer's informer", func() bool {
		c := rollout.Condition(sc.deployment("default", "web").Status, appsv1.DeploymentProgressing)
		return c != nil && c.Reason == rollout.ReasonProgressDeadline
	}))
	dep := sc.deployment("default", "web")
	require.GreaterOrEqual(t, dep.Status.AvailableReplicas, int32(3), "maxUnavailable (25%% of 4 = 1) kept the old pods serving")

	_, err = k.run(ctx, "rollout", "undo", "deployment/web")
	require.NoError(t, err)
	_, err = k.run(ctx, "rollout", "status", "deployment/web", "--timeout=30s")
	require.NoError(t, err)
	require.NoError(t, sc.await("back on nginx:1", func() bool {
		return sc.rolledOut("default", "web", 4) && sc.podsWithImage("default", "web", "nginx:1") == 4 &&
			len(sc.podsOf("default", "web")) == 4
	}))
	c := rollout.Condition(sc.deployment("default", "web").Status, appsv1.DeploymentProgressing)
	require.Equal(t, rollout.ReasonNewRSAvailable, c.Reason, "progressing again after the undo")
}
