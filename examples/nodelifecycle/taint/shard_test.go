package taint

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/listwatch/examples/nodelifecycle/api"
	"github.com/listwatch/listwatch/examples/nodelifecycle/api/apitest"
	"github.com/listwatch/listwatch/examples/nodelifecycle/simulator"
)

// TestShardedTaintManagers: two taint managers, each with a pods informer
// over one half of the pod UID hash space (api.UIDShards(2)) and every
// node, evict a NoExecute-tainted node's plain pods between them: each
// evicts only pods of its own shard, each evicts some, no pod is evicted
// twice, and together they evict every plain pod of that node and nothing
// else.
func TestShardedTaintManagers(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	env := apitest.Start(t, etcdServer.Client, apitest.Options{})
	env.StartInformers(t)
	c, inf := env.Client, env.Informers
	sim, err := simulator.New(simulator.Config{Client: c, Zones: 1, NodesPerZone: 2, PodsPerNode: 41,
		TolerationSeconds: 3600, Workers: 4})
	require.NoError(t, err)
	require.NoError(t, sim.Setup(ctx))

	shards := api.UIDShards(2)
	var mu sync.Mutex
	evicted := make([][]string, len(shards))
	shardInf := make([]*api.Informers, len(shards))
	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { stop(); wg.Wait() }()
	for i, sel := range shards {
		hc := &http.Client{Transport: &http.Transport{}}
		si, err := api.NewShardInformers(api.NewClient(env.API.URL, hc), sel)
		require.NoError(t, err)
		si.Factory.Start(runCtx)
		t.Cleanup(func() { si.Factory.Shutdown(); hc.CloseIdleConnections() })
		for _, ok := range si.Factory.WaitForCacheSync(ctx) {
			require.True(t, ok)
		}
		shardInf[i] = si
		tm, err := New(Config{Client: c, Informers: si, Workers: 2, OnEvict: func(e Eviction) {
			mu.Lock()
			evicted[i] = append(evicted[i], e.Namespace+"/"+e.Pod)
			mu.Unlock()
		}})
		require.NoError(t, err)
		wg.Go(func() { require.NoError(t, tm.Run(runCtx)) })
	}

	// Each shard's informer holds its half: disjoint, together all pods.
	// The whole informer synced before the pods were created, so its
	// watch may still trail the shards' lists.
	apitest.WaitFor(ctx, t, "the whole pods informer to see every pod", func() bool { return len(inf.Pods.GetStore().List()) == 2*41 })
	all := inf.Pods.GetStore().List()
	owner := map[string]int{}
	for i, si := range shardInf {
		for _, p := range si.Pods.GetStore().List() {
			_, dup := owner[p.Namespace+"/"+p.Name]
			require.False(t, dup, "pod %s/%s in two shards", p.Namespace, p.Name)
			owner[p.Namespace+"/"+p.Name] = i
		}
	}
	require.Len(t, owner, len(all), "the shards together hold every pod")

	var plain []string
	pods, err := inf.PodsOnNode("node-a0")
	require.NoError(t, err)
	for _, p := range pods {
		if p.Labels[simulator.KindLabel] == string(simulator.PodPlain) {
			plain = append(plain, p.Namespace+"/"+p.Name)
		}
	}
	require.Len(t, plain, 20)

	_, err = api.Mutate(ctx, c, api.Nodes, "", "node-a0", func() *corev1.Node { return &corev1.Node{} },
		func(n *corev1.Node) (bool, error) {
			n.Spec.Taints = append(n.Spec.Taints, corev1.Taint{Key: api.TaintUnreachable, Effect: corev1.TaintEffectNoExecute})
			return true, nil
		})
	require.NoError(t, err)

	apitest.WaitFor(ctx, t, "node-a0's plain pods evicted by the two shards", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(evicted[0])+len(evicted[1]) >= len(plain)
	})
	// Give a duplicate eviction a chance to show: every pod informer of
	// both shards and the whole one have seen the deletes.
	apitest.WaitFor(ctx, t, "the deletes observed", func() bool {
		pods, err := inf.PodsOnNode("node-a0")
		require.NoError(t, err)
		return len(pods) == 41-len(plain)
	})
	mu.Lock()
	defer mu.Unlock()
	var union []string
	for i, ev := range evicted {
		require.NotEmpty(t, ev, "shard %d evicted nothing", i)
		for _, key := range ev {
			require.Equal(t, i, owner[key], "shard %d evicted %s of shard %d", i, key, owner[key])
		}
		union = append(union, ev...)
	}
	slices.Sort(union)
	slices.Sort(plain)
	require.Equal(t, plain, union, "every plain pod of node-a0 evicted exactly once, nothing else")
	pods, err = inf.PodsOnNode("node-a1")
	require.NoError(t, err)
	require.Len(t, pods, 41, "the untainted node keeps its pods")
}
