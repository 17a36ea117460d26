package controller

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/examples/nodelifecycle/api"
)

// TestSetControllerTaints: only the controller's taints of the given
// effect change; the wanted one is added once, the other removed; other
// taints and effects stay.
func TestSetControllerTaints(t *testing.T) {
	other := corev1.Taint{Key: "dedicated", Effect: corev1.TaintEffectNoExecute}
	unreachNS := corev1.Taint{Key: api.TaintUnreachable, Effect: corev1.TaintEffectNoSchedule}
	unreachNE := corev1.Taint{Key: api.TaintUnreachable, Effect: corev1.TaintEffectNoExecute}
	notReadyNE := corev1.Taint{Key: api.TaintNotReady, Effect: corev1.TaintEffectNoExecute}
	for name, tc := range map[string]struct {
		have    []corev1.Taint
		want    string
		changed bool
		after   []corev1.Taint
	}{
		"add":         {[]corev1.Taint{other, unreachNS}, api.TaintUnreachable, true, []corev1.Taint{other, unreachNS, unreachNE}},
		"already":     {[]corev1.Taint{unreachNE}, api.TaintUnreachable, false, []corev1.Taint{unreachNE}},
		"swap":        {[]corev1.Taint{notReadyNE, other}, api.TaintUnreachable, true, []corev1.Taint{other, unreachNE}},
		"remove":      {[]corev1.Taint{unreachNS, unreachNE, other}, "", true, []corev1.Taint{unreachNS, other}},
		"nothing":     {nil, "", false, nil},
		"dedup twice": {[]corev1.Taint{unreachNE, unreachNE}, api.TaintUnreachable, true, []corev1.Taint{unreachNE}},
	} {
		n := &corev1.Node{Spec: corev1.NodeSpec{Taints: tc.have}}
		require.Equal(t, tc.changed, setControllerTaints(n, corev1.TaintEffectNoExecute, tc.want, &corev1.Taint{}), name)
		require.Equal(t, tc.after, n.Spec.Taints, name)
	}
}

// TestHealthObserve: on a fake timeline, the probe time moves only when the
// controller sees a new lease renewTime or a new NodeReady heartbeat, and a
// node seen first counts as heartbeating then.
func TestHealthObserve(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h := newHealthMap()
	n := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{
		{Type: corev1.NodeReady, Status: corev1.ConditionTrue, LastHeartbeatTime: metav1.NewTime(t0.Add(-time.Hour))}}}}
	renew := metav1.NewMicroTime(t0.Add(-time.Minute))
	l := &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{RenewTime: &renew}}
	require.Equal(t, t0, h.observe(n, l, t0))
	require.Equal(t, t0, h.observe(n, l, t0.Add(10*time.Second)), "nothing new")
	renew2 := metav1.NewMicroTime(t0.Add(-30 * time.Second)) // kubelet clock skew does not matter
	l2 := &coordinationv1.Lease{Spec: coordinationv1.LeaseSpec{RenewTime: &renew2}}
	require.Equal(t, t0.Add(20*time.Second), h.observe(n, l2, t0.Add(20*time.Second)))
	require.Equal(t, t0.Add(20*time.Second), h.observe(n, l, t0.Add(30*time.Second)), "an older lease is no heartbeat")
	n2 := n.DeepCopy()
	n2.Status.Conditions[0].LastHeartbeatTime = metav1.NewTime(t0)
	require.Equal(t, t0.Add(40*time.Second), h.observe(n2, nil, t0.Add(40*time.Second)))
	h.resetAll(t0.Add(time.Hour))
	require.Equal(t, t0.Add(time.Hour), h.observe(n2, nil, t0.Add(2*time.Hour)))
	h.forgetExcept(map[string]bool{})
	require.Equal(t, t0.Add(3*time.Hour), h.observe(n2, nil, t0.Add(3*time.Hour)))
}
