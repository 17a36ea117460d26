package demo

import (
	"context"
	"net/http"
	"sync/atomic"
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
	sc, web := startFailover(t)
	s, ctx := sc.s, sc.ctx

	// 1: killed while creating: as soon as the third pod shows, from the
	// watch handler, so that the kill lands between slow-start batches.
	first := s.Leader()
	require.GreaterOrEqual(t, first, 0)
	atKill := killWhenSeen(t, ctx, s, web, first, "nginx:1", 3, func() error {
		return s.Client.Create(ctx, api.Deployments, webDeployment(replicas, "nginx:1"))
	})
	t.Logf("leader killed with %d of %d pods seen", atKill, replicas)
	require.Less(t, atKill, replicas, "the leader was killed before it created every pod")
	require.NoError(t, sc.await("the standby elected", func() bool { return s.Replicas[1-first].CM.Manager.IsLeader() }))
	require.NoError(t, sc.await("all available", func() bool { return sc.rolledOut("default", "web", replicas) }))
	require.Equal(t, replicas, web.created("nginx:1"), "pods created for %d replicas", replicas)
	require.Len(t, sc.podsOf("default", "web"), replicas)

	// 2: a replacement replica joins as standby; the leader is killed
	// mid-rollout.
	require.NoError(t, s.startReplica(first))
	web.resetPeak()
	second := 1 - first
	require.Equal(t, second, s.Leader())
	atKill = killWhenSeen(t, ctx, s, web, second, "nginx:2", 2, func() error {
		_, err := api.Mutate(ctx, s.Client, api.Deployments, "default", "web", newDeployment, func(d *deploymentT) (bool, error) {
			d.Spec.Template.Spec.Containers[0].Image = "nginx:2"
			return true, nil
		})
		return err
	})
	t.Logf("leader killed mid-rollout with %d of %d new pods seen", atKill, replicas)
	require.Less(t, atKill, replicas)
	require.NoError(t, sc.await("the replacement elected", func() bool { return s.Replicas[first].CM.Manager.IsLeader() }))
	require.NoError(t, sc.await("the rollout complete", func() bool {
		return sc.rolledOut("default", "web", replicas) && sc.podsWithImage("default", "web", "nginx:2") == replicas &&
			len(sc.podsOf("default", "web")) == replicas
	}))
	require.Equal(t, replicas, web.created("nginx:2"), "pods of the new template created for %d replicas", replicas)
	require.LessOrEqual(t, web.resetPeak(), replicas+replicas/4, "pods alive at once, above replicas + maxSurge (25%%)")
}

// TestLeaderKilledWhileStandbyLags: the standby's watches run 6 s late (a
// slow network: twice the lease), so when it is elected its cache lacks
// the pods the killed leader created last, and may lack their ReplicaSet.
// The manager starts its controllers only once the cache has caught up
// with the revision current at the election; a controller acting before
// would create those pods again (it does without the wait: 15-19 pods
// for 12). No pod is created twice, none is lost. Once its controllers
// run, the lag is lifted, so that the rest of the rollout is quick.
func TestLeaderKilledWhileStandbyLags(t *testing.T) {
	const replicas = 12
	sc, web := startFailover(t)
	s, ctx := sc.s, sc.ctx

	// The standby is replaced by one behind a slow network.
	first := s.Leader()
	require.GreaterOrEqual(t, first, 0)
	s.Kill(1 - first)
	lag := &atomic.Int64{}
	lag.Store(int64(2 * s.Options.LeaseDuration))
	s.replicaHTTP = &http.Client{Transport: laggingWatches{base: s.Client.HTTPClient().Transport, lag: lag}}
	require.NoError(t, s.startReplica(1-first))
	require.Equal(t, first, s.Leader())

	atKill := killWhenSeen(t, ctx, s, web, first, "nginx:1", 3, func() error {
		return s.Client.Create(ctx, api.Deployments, webDeployment(replicas, "nginx:1"))
	})
	t.Logf("leader killed with %d of %d pods seen", atKill, replicas)
	require.NoError(t, sc.await("the lagging standby elected", func() bool { return s.Replicas[1-first].CM.Manager.IsLeader() }))
	lag.Store(0) // its controllers run: the rest of the rollout need not crawl
	require.NoError(t, sc.await("all available", func() bool { return sc.rolledOut("default", "web", replicas) }))
	require.Equal(t, replicas, web.created("nginx:1"), "pods created for %d replicas", replicas)
	require.Len(t, sc.podsOf("default", "web"), replicas)
}

// killWhenSeen runs act, then kills replica i from the pod watch handler
// as soon as the seen-th pod of image shows (so that the kill lands
// between the controllers' batches of writes), and returns how many pods
// of image had shown then.
func killWhenSeen(t *testing.T, ctx context.Context, s *Stack, web *tracker, i int, image string, seen int, act func() error) int {
	t.Helper()
	killed := make(chan int, 1)
	web.setOnNew(func(img string, n int) {
		if img == image && n == seen {
			s.Kill(i)
			killed <- web.created(image)
		}
	})
	defer web.setOnNew(nil)
	require.NoError(t, act())
	select {
	case at := <-killed:
		return at
	case <-ctx.Done():
		t.Fatalf("pod %d of %s never showed", seen, image)
		return 0
	}
}

// startFailover starts a stack whose pods start in 300 ms (slow enough to
// kill a replica mid-rollout) and a tracker of web's pods, and returns
// them with a script whose waits end with the test's 90 s.
func startFailover(t *testing.T) (*script, *tracker) {
	t.Helper()
	s := startStack(t, Options{StartDelay: 300 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	t.Cleanup(cancel)
	web, reg, err := newTracker(s.View.Pods, "web")
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.View.Pods.RemoveEventHandler(reg) })
	return &script{ctx: ctx, s: s}, web
}
