package demo

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/examples/nodelifecycle/api"
)

// TestLeaderKilledMidRollout kills the leading controller manager twice:
// while its ReplicaSet controller is still creating a new Deployment's
// pods (slow-start batches in flight, the informer behind its own
// writes), then in the middle of a rolling update. Each time the standby
// takes over and finishes: no pod is created twice (exactly one pod per
// replica of each template was ever seen), none is lost (all available),
// and the rollout never ran above replicas + maxSurge.
func TestLeaderKilledMidRollout(t *testing.T) {
	const replicas = 24
	s := startStack(t, Options{StartDelay: 300 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	web, reg, err := newTracker(s.View.Pods, "web")
	require.NoError(t, err)
	defer func() { _ = s.View.Pods.RemoveEventHandler(reg) }()
	sc := &script{ctx: ctx, s: s}

	// 1: killed while creating.
	require.NoError(t, s.Client.Create(ctx, api.Deployments, webDeployment(replicas, "nginx:1")))
	require.NoError(t, sc.await("the first pods", func() bool { return web.created("nginx:1") > 0 }))
	first := s.Leader()
	require.GreaterOrEqual(t, first, 0)
	s.Kill(first)
	require.Less(t, web.created("nginx:1"), replicas, "the leader was killed before it created every pod")
	require.NoError(t, sc.await("the standby elected", func() bool { return s.Replicas[1-first].CM.Manager.IsLeader() }))
	require.NoError(t, sc.await("all available", func() bool { return sc.rolledOut("default", "web", replicas) }))
	require.Equal(t, replicas, web.created("nginx:1"), "pods created for %d replicas", replicas)
	require.Len(t, sc.podsOf("default", "web"), replicas)

	// 2: a replacement replica joins as standby; the leader is killed
	// mid-rollout.
	require.NoError(t, s.startReplica(first))
	web.resetPeak()
	_, err = api.Mutate(ctx, s.Client, api.Deployments, "default", "web", newDeployment, func(d *deploymentT) (bool, error) {
		d.Spec.Template.Spec.Containers[0].Image = "nginx:2"
		return true, nil
	})
	require.NoError(t, err)
	require.NoError(t, sc.await("the rollout under way", func() bool {
		n := web.created("nginx:2")
		return n > 0 && n < replicas
	}))
	second := s.Leader()
	require.Equal(t, 1-first, second)
	s.Kill(second)
	require.NoError(t, sc.await("the replacement elected", func() bool { return s.Replicas[first].CM.Manager.IsLeader() }))
	require.NoError(t, sc.await("the rollout complete", func() bool {
		return sc.rolledOut("default", "web", replicas) && sc.podsWithImage("default", "web", "nginx:2") == replicas &&
			len(sc.podsOf("default", "web")) == replicas
	}))
	require.Equal(t, replicas, web.created("nginx:2"), "pods of the new template created for %d replicas", replicas)
	require.LessOrEqual(t, web.resetPeak(), replicas+replicas/4, "pods alive at once, above replicas + maxSurge (25%%)")
}
