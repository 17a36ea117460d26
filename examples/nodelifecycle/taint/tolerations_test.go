package taint

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/examples/nodelifecycle/api"
)

func secs(s int64) *int64 { return &s }

// TestTolerationTime: 0 (evict now) when a NoExecute taint is not
// tolerated; forever when all are tolerated without tolerationSeconds; the
// shortest tolerationSeconds otherwise; the first matching toleration of a
// taint is the one used; key, value, operator and effect rules.
func TestTolerationTime(t *testing.T) {
	unreach := corev1.Taint{Key: api.TaintUnreachable, Effect: corev1.TaintEffectNoExecute}
	notReady := corev1.Taint{Key: api.TaintNotReady, Effect: corev1.TaintEffectNoExecute}
	dedicated := corev1.Taint{Key: "dedicated", Value: "db", Effect: corev1.TaintEffectNoExecute}
	exists := func(key string, s *int64) corev1.Toleration {
		return corev1.Toleration{Key: key, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: s}
	}
	for name, tc := range map[string]struct {
		tols   []corev1.Toleration
		taints []corev1.Taint
		want   time.Duration
	}{
		"no toleration":         {nil, []corev1.Taint{unreach}, 0},
		"no taint":              {nil, nil, forever},
		"forever":               {[]corev1.Toleration{exists(api.TaintUnreachable, nil)}, []corev1.Taint{unreach}, forever},
		"seconds":               {[]corev1.Toleration{exists(api.TaintUnreachable, secs(30))}, []corev1.Taint{unreach}, 30 * time.Second},
		"one of two tolerated":  {[]corev1.Toleration{exists(api.TaintUnreachable, secs(30))}, []corev1.Taint{unreach, notReady}, 0},
		"shortest of two":       {[]corev1.Toleration{exists(api.TaintNotReady, secs(10)), exists(api.TaintUnreachable, secs(30))}, []corev1.Taint{unreach, notReady}, 10 * time.Second},
		"forever and seconds":   {[]corev1.Toleration{exists(api.TaintNotReady, nil), exists(api.TaintUnreachable, secs(30))}, []corev1.Taint{unreach, notReady}, 30 * time.Second},
		"first match is used":   {[]corev1.Toleration{exists(api.TaintUnreachable, secs(5)), exists("", nil)}, []corev1.Taint{unreach}, 5 * time.Second},
		"empty key exists":      {[]corev1.Toleration{{Operator: corev1.TolerationOpExists}}, []corev1.Taint{unreach, dedicated}, forever},
		"negative is now":       {[]corev1.Toleration{exists(api.TaintUnreachable, secs(-5))}, []corev1.Taint{unreach}, 0},
		"equal value":           {[]corev1.Toleration{{Key: "dedicated", Value: "db", Effect: corev1.TaintEffectNoExecute}}, []corev1.Taint{dedicated}, forever},
		"wrong value":           {[]corev1.Toleration{{Key: "dedicated", Value: "web", Effect: corev1.TaintEffectNoExecute}}, []corev1.Taint{dedicated}, 0},
		"wrong effect":          {[]corev1.Toleration{{Key: api.TaintUnreachable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule}}, []corev1.Taint{unreach}, 0},
		"any effect":            {[]corev1.Toleration{{Key: api.TaintUnreachable, Operator: corev1.TolerationOpExists}}, []corev1.Taint{unreach}, forever},
		"numeric not supported": {[]corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpGt, Value: "1"}}, []corev1.Taint{dedicated}, 0},
	} {
		require.Equal(t, tc.want, tolerationTime(tc.tols, tc.taints), name)
	}
}

// TestDaemonPodAndTaintHelpers: only a controller owner of kind DaemonSet
// marks a daemon pod; NoExecute taints are picked out and compared.
func TestDaemonPodAndTaintHelpers(t *testing.T) {
	yes, no := true, false
	pod := func(refs ...metav1.OwnerReference) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{OwnerReferences: refs}}
	}
	require.True(t, isDaemonPod(pod(metav1.OwnerReference{Kind: "DaemonSet", Controller: &yes})))
	require.False(t, isDaemonPod(pod(metav1.OwnerReference{Kind: "DaemonSet", Controller: &no})))
	require.False(t, isDaemonPod(pod(metav1.OwnerReference{Kind: "ReplicaSet", Controller: &yes})))
	require.False(t, isDaemonPod(pod()))

	n := &corev1.Node{Spec: corev1.NodeSpec{Taints: []corev1.Taint{
		{Key: "a", Effect: corev1.TaintEffectNoSchedule}, {Key: "b", Effect: corev1.TaintEffectNoExecute}}}}
	require.Equal(t, []corev1.Taint{{Key: "b", Effect: corev1.TaintEffectNoExecute}}, noExecuteTaints(n))
	require.True(t, sameTaints(noExecuteTaints(n), []corev1.Taint{{Key: "b", Effect: corev1.TaintEffectNoExecute}}))
	require.False(t, sameTaints(noExecuteTaints(n), nil))
	ns, name := splitKey("default/p1")
	require.Equal(t, []string{"default", "p1"}, []string{ns, name})
}
