package api_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/examples/nodelifecycle/api"
	"github.com/listwatch/listwatch/examples/nodelifecycle/api/apitest"
	"github.com/listwatch/listwatch/reflector"
)

func node(name, zone string) *corev1.Node {
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{api.ZoneLabel: zone}},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
}

func pod(name, nodeName string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec:   corev1.PodSpec{NodeName: nodeName, Containers: []corev1.Container{{Name: "c", Image: "pause"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
}

// TestTypedClientAndInformers: typed Node, Pod and Lease objects round-trip
// through the HTTP API at /api/v1 and /apis/coordination.k8s.io/v1; Mutate
// retries a conflicting update; the informers sync, index pods by node and
// see a taint added later.
func TestTypedClientAndInformers(t *testing.T) {
	e := apitest.Start(t, etcdServer.Client, apitest.Options{})
	c, ctx := e.Client, testCtx(t)
	require.NoError(t, c.Create(ctx, api.Nodes, node("n1", "z1")))
	require.NoError(t, c.Create(ctx, api.Pods, pod("p1", "n1")))
	require.NoError(t, c.Create(ctx, api.Pods, pod("p2", "n2")))
	holder := "n1"
	require.NoError(t, c.Create(ctx, api.Leases, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "n1",
		Namespace: api.LeaseNamespace}, Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder}}))

	stale := &corev1.Node{}
	require.NoError(t, c.Get(ctx, api.Nodes, "", "n1", stale))
	require.Equal(t, "z1", stale.Labels[api.ZoneLabel])
	fresh := stale.DeepCopy()
	fresh.Labels["x"] = "y"
	require.NoError(t, c.Update(ctx, api.Nodes, fresh))
	stale.Labels["x"] = "z"
	require.True(t, apierrors.IsConflict(c.Update(ctx, api.Nodes, stale)))

	e.StartInformers(t)
	inf := e.Informers
	pods, err := inf.PodsOnNode("n1")
	require.NoError(t, err)
	require.Len(t, pods, 1)
	require.Equal(t, "p1", pods[0].Name)
	_, ok := inf.Leases.GetIndexer().GetByKey(api.LeaseNamespace + "/n1")
	require.True(t, ok)

	tainted := make(chan struct{})
	_, err = inf.Nodes.AddEventHandler(reflector.ResourceEventHandlerFuncs[*corev1.Node]{
		UpdateFunc: func(_, n *corev1.Node) {
			if len(n.Spec.Taints) == 1 && n.Spec.Taints[0].Key == api.TaintUnreachable {
				close(tainted)
			}
		}})
	require.NoError(t, err)
	_, err = api.Mutate(ctx, c, api.Nodes, "", "n1", func() *corev1.Node { return &corev1.Node{} },
		func(n *corev1.Node) (bool, error) {
			n.Spec.Taints = []corev1.Taint{{Key: api.TaintUnreachable, Effect: corev1.TaintEffectNoExecute}}
			return true, nil
		})
	require.NoError(t, err)
	select {
	case <-tainted:
	case <-ctx.Done():
		t.Fatal("the node informer did not see the taint")
	}
	require.True(t, apierrors.IsNotFound(c.Delete(ctx, api.Pods, "default", "nope")))
}

// TestKubectlNodes: stock kubectl lists nodes with the printer columns,
// describes a node with its taints (describe also lists the node's pods
// by fieldSelector and reads its lease) and lists leases and pods.
func TestKubectlNodes(t *testing.T) {
	bin, err := exec.LookPath("kubectl")
	if err != nil {
		t.Skip("kubectl not on PATH")
	}
	e := apitest.Start(t, etcdServer.Client, apitest.Options{})
	a, c, ctx := e.API, e.Client, testCtx(t)
	n := node("n1", "z1")
	n.Spec.Taints = []corev1.Taint{{Key: api.TaintUnreachable, Effect: corev1.TaintEffectNoSchedule}}
	require.NoError(t, c.Create(ctx, api.Nodes, n))
	require.NoError(t, c.Create(ctx, api.Pods, pod("p1", "n1")))
	renew := metav1.NewMicroTime(time.Now())
	holder := "n1"
	require.NoError(t, c.Create(ctx, api.Leases, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "n1",
		Namespace: api.LeaseNamespace}, Spec: coordinationv1.LeaseSpec{HolderIdentity: &holder, RenewTime: &renew}}))

	cache := t.TempDir()
	require.NoError(t, os.WriteFile(cache+"/none", []byte("apiVersion: v1\nkind: Config\n"), 0o600))
	kubectl := func(args ...string) string {
		t.Helper()
		out, err := exec.CommandContext(ctx, bin, append([]string{"--server", a.URL, "--cache-dir", cache,
			"--kubeconfig", cache + "/none"}, args...)...).CombinedOutput()
		require.NoError(t, err, string(out))
		return string(out)
	}
	out := kubectl("get", "nodes")
	require.Regexp(t, `NAME\s+READY\s+REASON\s+ZONE\s+TAINT\s+AGE`, out)
	require.Regexp(t, `n1\s+True\s+z1\s+node.kubernetes.io/unreachable`, out)
	out = kubectl("describe", "node", "n1")
	require.Contains(t, out, "Taints:             node.kubernetes.io/unreachable:NoSchedule")
	require.Contains(t, out, "HolderIdentity:  n1")
	require.Contains(t, out, "Non-terminated Pods:          (1 in total)")
	require.True(t, strings.Contains(out, "p1"), out)
	require.Contains(t, kubectl("get", "leases", "-n", api.LeaseNamespace, "-o", "name"), "lease.coordination.k8s.io/n1")
	require.Contains(t, kubectl("get", "pods", "-A", "--field-selector", "spec.nodeName=n1", "-o", "name"), "pod/p1")
}
