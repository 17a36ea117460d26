package replication

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
)

func TestExpectations(t *testing.T) {
	now := time.Unix(0, 0)
	e := NewExpectations(time.Minute, func() time.Time { return now })
	require.True(t, e.Satisfied("ns/rs"), "nothing awaited")
	e.ExpectCreations("ns/rs", 2)
	require.False(t, e.Satisfied("ns/rs"))
	e.CreationObserved("ns/rs")
	require.False(t, e.Satisfied("ns/rs"), "one create still unseen: a sync now would create it again")
	e.CreationObserved("ns/rs")
	require.True(t, e.Satisfied("ns/rs"))
	e.CreationObserved("ns/rs") // an extra observation does not go negative
	adds, _ := e.Pending("ns/rs")
	require.Zero(t, adds)

	e.ExpectDeletions("ns/rs", []string{"ns/p1", "ns/p2"})
	e.DeletionObserved("ns/rs", "ns/p1")
	e.DeletionObserved("ns/rs", "ns/p1") // twice: counted once
	require.False(t, e.Satisfied("ns/rs"))
	e.DeletionObserved("ns/rs", "ns/p2")
	require.True(t, e.Satisfied("ns/rs"))

	e.ExpectCreations("ns/rs", 5)
	now = now.Add(2 * time.Minute)
	require.True(t, e.Satisfied("ns/rs"), "expired: an event was lost, the relist repairs it")
	e.Forget("ns/rs")
	adds, dels := e.Pending("ns/rs")
	require.Zero(t, adds+dels)
}

func TestSlowStart(t *testing.T) {
	var calls atomic.Int32
	n, err := SlowStart(10, func() error { calls.Add(1); return nil })
	require.NoError(t, err)
	require.Equal(t, 10, n)
	require.Equal(t, int32(10), calls.Load())

	// Every create fails: the first batch of one is all that is sent.
	calls.Store(0)
	boom := errors.New("quota")
	n, err = SlowStart(100, func() error { calls.Add(1); return boom })
	require.ErrorIs(t, err, boom)
	require.Zero(t, n)
	require.Equal(t, int32(1), calls.Load())

	// Failures from the 4th call on: batches 1, 2 succeed, the batch of 4
	// fails; nothing after it.
	calls.Store(0)
	n, err = SlowStart(100, func() error {
		if calls.Add(1) > 3 {
			return boom
		}
		return nil
	})
	require.ErrorIs(t, err, boom)
	require.Equal(t, 3, n)
	require.Equal(t, int32(7), calls.Load())
	n, err = SlowStart(0, func() error { return boom })
	require.NoError(t, err)
	require.Zero(t, n)
}

func pod(name string, lbl map[string]string, owner *metav1.OwnerReference) *corev1.Pod {
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", Labels: lbl}}
	if owner != nil {
		p.OwnerReferences = []metav1.OwnerReference{*owner}
	}
	return p
}

func TestClaim(t *testing.T) {
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "rs", Namespace: "ns", UID: "rs-uid"}}
	mine := ControllerRef(rs, "apps/v1", "ReplicaSet")
	other := ControllerRef(&appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "x", UID: "x-uid"}}, "apps/v1", "ReplicaSet")
	web := map[string]string{"app": "web"}
	owned := pod("owned", web, &mine)
	moved := pod("moved", map[string]string{"app": "db"}, &mine)
	orphan := pod("orphan", web, nil)
	stranger := pod("stranger", web, &other)
	unrelated := pod("unrelated", map[string]string{"app": "db"}, nil)
	dying := pod("dying", web, nil)
	dying.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	sel := labels.SelectorFromSet(web)
	c := Claim(rs, sel, []*corev1.Pod{owned, moved, orphan, stranger, unrelated, dying})
	require.Equal(t, []*corev1.Pod{owned}, c.Owned)
	require.Equal(t, []*corev1.Pod{orphan}, c.Adopt)
	require.Equal(t, []*corev1.Pod{moved}, c.Release)

	rs.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	c = Claim(rs, sel, []*corev1.Pod{owned, moved, orphan})
	require.Equal(t, []*corev1.Pod{owned}, c.Owned)
	require.Empty(t, c.Adopt, "an owner being deleted adopts nothing")
	require.Empty(t, c.Release)

	refs := WithoutOwner([]metav1.OwnerReference{mine, other}, "rs-uid")
	require.Equal(t, []metav1.OwnerReference{other}, refs)
}

func readyPod(name string, ready bool, since time.Time) *corev1.Pod {
	st := corev1.ConditionFalse
	if ready {
		st = corev1.ConditionTrue
	}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app": "web"}},
		Spec: corev1.PodSpec{NodeName: "n1"},
		Status: corev1.PodStatus{Phase: corev1.PodRunning, Conditions: []corev1.PodCondition{
			{Type: corev1.PodReady, Status: st, LastTransitionTime: metav1.NewTime(since)}}}}
}

func TestStatusAndAvailability(t *testing.T) {
	now := time.Unix(100, 0)
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Generation: 3},
		Spec: appsv1.ReplicaSetSpec{MinReadySeconds: 10,
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}}}}}
	old, fresh, notReady := readyPod("a", true, now.Add(-time.Minute)), readyPod("b", true, now.Add(-time.Second)), readyPod("c", false, now)
	s := Status(rs, []*corev1.Pod{old, fresh, notReady}, now)
	require.Equal(t, appsv1.ReplicaSetStatus{Replicas: 3, FullyLabeledReplicas: 3, ReadyReplicas: 2, AvailableReplicas: 1,
		ObservedGeneration: 3}, s)
	wait := NextAvailableCheck(rs, []*corev1.Pod{old, fresh, notReady}, now)
	require.InDelta(t, float64(9*time.Second), float64(wait), float64(10*time.Millisecond))

	done := &corev1.Pod{Status: corev1.PodStatus{Phase: corev1.PodSucceeded}}
	require.False(t, IsActive(done))
	require.True(t, IsActive(notReady))
}

func TestPodsToDelete(t *testing.T) {
	now := time.Unix(100, 0)
	unscheduled := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "u"}, Status: corev1.PodStatus{Phase: corev1.PodPending}}
	pending := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{NodeName: "n"},
		Status: corev1.PodStatus{Phase: corev1.PodPending}}
	notReady := readyPod("nr", false, now)
	readyLong := readyPod("rl", true, now.Add(-time.Hour))
	readyShort := readyPod("rs", true, now.Add(-time.Second))
	got := PodsToDelete([]*corev1.Pod{readyLong, readyShort, notReady, pending, unscheduled}, 4)
	var names []string
	for _, p := range got {
		names = append(names, p.Name)
	}
	require.Equal(t, []string{"u", "p", "nr", "rs"}, names)
	require.Len(t, PodsToDelete(got, 10), 4)
}

func TestNewPod(t *testing.T) {
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web-abc", Namespace: "ns", UID: types.UID("u")},
		Spec: appsv1.ReplicaSetSpec{Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
			Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "c", Image: "nginx"}}}}}}
	p := NewPod(rs)
	require.Equal(t, "web-abc-", p.GenerateName)
	require.Equal(t, "ns", p.Namespace)
	require.Equal(t, "web", p.Labels["app"])
	ref := metav1.GetControllerOf(p)
	require.NotNil(t, ref)
	require.Equal(t, types.UID("u"), ref.UID)
	require.Equal(t, "ReplicaSet", ref.Kind)
	p.Labels["x"] = "y"
	require.NotContains(t, rs.Spec.Template.Labels, "x", "the template is not shared")
}
