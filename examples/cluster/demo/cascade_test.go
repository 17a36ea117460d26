package demo

import (
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/examples/nodelifecycle/api"
)

// TestCascadeOrphanWithKubectl: kubectl delete --cascade=orphan returns
// once the Deployment is gone (the server marked it with the orphan
// finalizer, the garbage collector released its ReplicaSet and removed
// the finalizer), and the ReplicaSet keeps running its pods without an
// owner; kubectl delete --cascade=background of that ReplicaSet then has
// its pods collected. (TestDemoWithKubectl covers background and
// foreground deletes of Deployments.)
func TestCascadeOrphanWithKubectl(t *testing.T) {
	sc, k := startWithKubectl(t)
	s, ctx := sc.s, sc.ctx
	require.NoError(t, s.Client.Create(ctx, api.Deployments, webDeployment(2, "nginx:1")))
	require.NoError(t, sc.await("2 available", func() bool { return sc.rolledOut("default", "web", 2) }))
	rss := sc.replicaSetsOf("default", "web")
	require.Len(t, rss, 1)
	rs := rss[0]

	_, err := k.run(ctx, "delete", "deployment", "web", "--cascade=orphan", "--timeout=30s")
	require.NoError(t, err)
	require.NoError(t, sc.await("the Deployment gone, its ReplicaSet without owner, its pods running", func() bool {
		_, dOK := s.View.Deployments.GetIndexer().GetByKey("default/web")
		r, ok := s.View.ReplicaSets.GetIndexer().GetByKey("default/" + rs.Name)
		return !dOK && ok && metav1.GetControllerOf(r) == nil && r.DeletionTimestamp == nil &&
			len(s.View.PodsOf(string(rs.UID))) == 2
	}))

	_, err = k.run(ctx, "delete", "replicaset", rs.Name, "--cascade=background", "--timeout=30s")
	require.NoError(t, err)
	require.NoError(t, sc.await("the ReplicaSet's pods collected", func() bool {
		return len(s.View.PodsOf(string(rs.UID))) == 0
	}))
}
