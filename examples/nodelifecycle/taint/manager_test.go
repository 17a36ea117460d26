package taint

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/examples/nodelifecycle/api"
	"github.com/listwatch/listwatch/examples/nodelifecycle/api/apitest"
	"github.com/listwatch/listwatch/reflector/workqueue/workqueuetest"
)

// testPod is a pod on node; when tolerate, it tolerates the unreachable
// NoExecute taint for *tol seconds (forever when tol is nil).
func testPod(name, node string, tol *int64, tolerate bool) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "c", Image: "pause"}}}}
	if tolerate {
		p.Spec.Tolerations = []corev1.Toleration{{Key: api.TaintUnreachable, Operator: corev1.TolerationOpExists,
			Effect: corev1.TaintEffectNoExecute, TolerationSeconds: tol}}
	}
	return p
}

// TestEvictionsOnFakeClock: with the manager's clock fake, a NoExecute
// taint on a node evicts its non-tolerating pod at once and schedules the
// pods tolerating it for 30 s and 60 s; 30 s later (fake) the first is
// evicted; when the taint goes the second's eviction is cancelled and
// never happens; pods tolerating forever, daemon pods and pods of other
// nodes are never touched. The manager is quiet except while an event or
// a due eviction waits for it.
func TestEvictionsOnFakeClock(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	env := apitest.Start(t, etcdServer.Client, apitest.Options{})
	env.StartInformers(t)
	c, inf := env.Client, env.Informers
	clock := workqueuetest.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	require.NoError(t, c.Create(ctx, api.Nodes, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}))
	require.NoError(t, c.Create(ctx, api.Nodes, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n2"}}))
	daemon := testPod("daemon", "n1", nil, false)
	yes := true
	daemon.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "ds", UID: "u", Controller: &yes}}
	for _, p := range []*corev1.Pod{testPod("plain", "n1", nil, false), testPod("t30", "n1", secs(30), true),
		testPod("t60", "n1", secs(60), true), testPod("forever", "n1", nil, true), daemon, testPod("other", "n2", nil, false)} {
		require.NoError(t, c.Create(ctx, api.Pods, p))
	}
	var mu sync.Mutex
	var evicted []Eviction
	m, err := New(Config{Client: c, Informers: inf, Workers: 3, Clock: clock,
		OnEvict: func(e Eviction) { mu.Lock(); evicted = append(evicted, e); mu.Unlock() }})
	require.NoError(t, err)
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- m.Run(runCtx) }()
	defer func() { stop(); require.NoError(t, <-done) }()
	exists := func(name string) bool {
		_, ok := inf.Pods.GetIndexer().GetByKey("default/" + name)
		return ok
	}
	evictedNames := func() []string {
		mu.Lock()
		defer mu.Unlock()
		var out []string
		for _, e := range evicted {
			out = append(out, e.Pod)
		}
		return out
	}

	setTaint := func(on bool) {
		_, err := api.Mutate(ctx, c, api.Nodes, "", "n1", func() *corev1.Node { return &corev1.Node{} },
			func(n *corev1.Node) (bool, error) {
				n.Spec.Taints = nil
				if on {
					n.Spec.Taints = []corev1.Taint{{Key: api.TaintUnreachable, Effect: corev1.TaintEffectNoExecute}}
				}
				return true, nil
			})
		require.NoError(t, err)
	}
	apitest.WaitFor(ctx, t, "the manager quiet", m.Quiet)
	setTaint(true)
	apitest.WaitFor(ctx, t, "plain evicted and two evictions pending", func() bool {
		return !exists("plain") && m.Pending() == 2 && len(evictedNames()) == 1
	})
	require.Equal(t, []string{"plain"}, evictedNames())
	apitest.WaitFor(ctx, t, "the manager quiet", m.Quiet)

	require.NoError(t, clock.WaitForTimer(ctx, clock.Now().Add(30*time.Second)))
	clock.Step(30*time.Second - time.Millisecond)
	require.True(t, m.Quiet(), "no eviction due yet")
	clock.Step(time.Millisecond)
	require.False(t, m.Quiet(), "t30's eviction due")
	// The informer's delete (which also cancels the pending entry) may
	// come before the eviction's callback.
	apitest.WaitFor(ctx, t, "t30 evicted", func() bool { return !exists("t30") && m.Pending() == 1 && len(evictedNames()) == 2 })
	mu.Lock()
	require.Equal(t, 30*time.Second, evicted[1].Waited)
	mu.Unlock()

	setTaint(false)
	apitest.WaitFor(ctx, t, "t60's eviction cancelled", func() bool { return m.Pending() == 0 })
	clock.Step(time.Hour)
	for _, p := range []string{"t60", "forever", "daemon", "other"} {
		require.True(t, exists(p), p)
	}
	require.Equal(t, []string{"plain", "t30"}, evictedNames())
}
