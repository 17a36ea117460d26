package scheduling

import (
	"testing"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func node(name string, ready bool, taints ...corev1.Taint) *corev1.Node {
	st := corev1.ConditionTrue
	if !ready {
		st = corev1.ConditionUnknown
	}
	alloc := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"),
		corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("3")}
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{Taints: taints},
		Status: corev1.NodeStatus{Allocatable: alloc, Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: st}}}}
}

func pod(cpu, mem string, tolerations ...corev1.Toleration) *corev1.Pod {
	req := corev1.ResourceList{}
	if cpu != "" {
		req[corev1.ResourceCPU] = resource.MustParse(cpu)
	}
	if mem != "" {
		req[corev1.ResourceMemory] = resource.MustParse(mem)
	}
	return &corev1.Pod{Spec: corev1.PodSpec{Tolerations: tolerations,
		Containers: []corev1.Container{{Name: "c", Resources: corev1.ResourceRequirements{Requests: req}}}}}
}

func TestFilter(t *testing.T) {
	unreachable := corev1.Taint{Key: "node.kubernetes.io/unreachable", Effect: corev1.TaintEffectNoExecute}
	noSchedule := corev1.Taint{Key: "dedicated", Value: "db", Effect: corev1.TaintEffectNoSchedule}
	prefer := corev1.Taint{Key: "soft", Effect: corev1.TaintEffectPreferNoSchedule}
	tolerateDB := corev1.Toleration{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "db", Effect: corev1.TaintEffectNoSchedule}
	for _, tc := range []struct {
		name  string
		node  *corev1.Node
		pod   *corev1.Pod
		usage Usage
		want  string
	}{
		{"fits", node("n", true), pod("1", "1Gi"), Usage{}, ""},
		{"not ready", node("n", false), pod("", ""), Usage{}, "node is not Ready"},
		{"unreachable taint", node("n", true, unreachable), pod("", ""), Usage{}, "untolerated taint node.kubernetes.io/unreachable:NoExecute"},
		{"NoSchedule taint", node("n", true, noSchedule), pod("", ""), Usage{}, "untolerated taint dedicated:NoSchedule"},
		{"tolerated", node("n", true, noSchedule), pod("", "", tolerateDB), Usage{}, ""},
		{"PreferNoSchedule is no filter", node("n", true, prefer), pod("", ""), Usage{}, ""},
		{"pods full", node("n", true), pod("", ""), Usage{Pods: 3}, "too many pods"},
		{"cpu", node("n", true), pod("1", ""), Usage{Pods: 1, MilliCPU: 3500}, "insufficient cpu"},
		{"memory", node("n", true), pod("", "1Gi"), Usage{Pods: 1, Memory: 7<<30 + 1}, "insufficient memory"},
	} {
		require.Equal(t, tc.want, Filter(tc.node, tc.pod, tc.usage), tc.name)
	}
	un := node("n", true)
	un.Spec.Unschedulable = true
	require.Equal(t, "node is unschedulable", Filter(un, pod("", ""), Usage{}))
}

func TestScoreAndPick(t *testing.T) {
	p := pod("1", "2Gi")
	empty, busy := node("a", true), node("b", true)
	usage := map[string]Usage{"b": Usage{}.Add(pod("2", "4Gi"))}
	require.Greater(t, Score(empty, p, Usage{}), Score(busy, p, usage["b"]))
	require.Equal(t, int64(MaxScore*3/4+MaxScore*3/4)/2, Score(empty, p, Usage{}))
	name, _ := Pick([]*corev1.Node{busy, empty}, p, usage, 0)
	require.Equal(t, "a", name, "least allocated wins")

	// Pods without requests spread too, and ties rotate with turn.
	bare := pod("", "")
	n1, n2 := node("n1", true), node("n2", true)
	u := map[string]Usage{"n1": Usage{}.Add(bare)}
	name, _ = Pick([]*corev1.Node{n1, n2}, bare, u, 0)
	require.Equal(t, "n2", name)
	a, _ := Pick([]*corev1.Node{n1, n2}, bare, nil, 0)
	b, _ := Pick([]*corev1.Node{n1, n2}, bare, nil, 1)
	require.NotEqual(t, a, b)

	// Nothing fits: the reasons say why.
	name, why := Pick([]*corev1.Node{node("x", false)}, bare, nil, 0)
	require.Empty(t, name)
	require.Equal(t, map[string]string{"x": "node is not Ready"}, why)
	require.Equal(t, Usage{}, Usage{}.Add(p).Sub(p))
}
