package rollout

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func deployment(replicaCount int32, surge, unavail string) *appsv1.Deployment {
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "d-uid", Generation: 1},
		Spec: appsv1.DeploymentSpec{Replicas: &replicaCount,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{"app": "web"}},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1"}}}}}}
	if surge != "" {
		s, u := intstr.Parse(surge), intstr.Parse(unavail)
		d.Spec.Strategy.RollingUpdate = &appsv1.RollingUpdateDeployment{MaxSurge: &s, MaxUnavailable: &u}
	}
	return Defaulted(d)
}

func rs(name string, age int, spec, available int32) *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name),
		CreationTimestamp: metav1.NewTime(time.Unix(int64(age), 0))},
		Spec:   appsv1.ReplicaSetSpec{Replicas: &spec},
		Status: appsv1.ReplicaSetStatus{Replicas: spec, ReadyReplicas: available, AvailableReplicas: available}}
}

func TestResolveFenceposts(t *testing.T) {
	for _, tc := range []struct {
		surge, unavail      string
		desired             int32
		wantSurge, wantUnav int32
	}{
		{"25%", "25%", 10, 3, 2}, // surge rounds up, unavailable down
		{"25%", "25%", 30, 8, 7},
		{"0", "0", 5, 0, 1}, // both zero: one may be unavailable
		{"1", "0", 3, 1, 0},
		{"0%", "50%", 3, 0, 1},
		{"100%", "0", 4, 4, 0},
	} {
		s, u := intstr.Parse(tc.surge), intstr.Parse(tc.unavail)
		gs, gu, err := ResolveFenceposts(&s, &u, tc.desired)
		require.NoError(t, err)
		require.Equal(t, [2]int32{tc.wantSurge, tc.wantUnav}, [2]int32{gs, gu}, "%+v", tc)
	}
	bad := intstr.FromString("x%")
	_, _, err := ResolveFenceposts(&bad, nil, 3)
	require.Error(t, err)
}

func TestDefaulted(t *testing.T) {
	d := Defaulted(&appsv1.Deployment{})
	require.Equal(t, int32(1), *d.Spec.Replicas)
	require.Equal(t, appsv1.RollingUpdateDeploymentStrategyType, d.Spec.Strategy.Type)
	require.Equal(t, "25%", d.Spec.Strategy.RollingUpdate.MaxSurge.String())
	require.Equal(t, int32(10), *d.Spec.RevisionHistoryLimit)
	require.Equal(t, int32(600), *d.Spec.ProgressDeadlineSeconds)
	r := Defaulted(&appsv1.Deployment{Spec: appsv1.DeploymentSpec{Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}}})
	require.Nil(t, r.Spec.Strategy.RollingUpdate)
	s, err := MaxSurge(r)
	require.NoError(t, err)
	require.Zero(t, s)
}

func TestNewReplicaSetReplicas(t *testing.T) {
	d := deployment(10, "3", "2")
	old := rs("old", 1, 10, 10)
	newRS := rs("new", 2, 0, 0)
	n, err := NewReplicaSetReplicas(d, []*appsv1.ReplicaSet{old, newRS}, newRS)
	require.NoError(t, err)
	require.Equal(t, int32(3), n, "surge of 3 above 10")
	newRS = rs("new", 2, 3, 0)
	n, _ = NewReplicaSetReplicas(d, []*appsv1.ReplicaSet{old, newRS}, newRS)
	require.Equal(t, int32(3), n, "at the ceiling of 13")
	old = rs("old", 1, 5, 5)
	n, _ = NewReplicaSetReplicas(d, []*appsv1.ReplicaSet{old, newRS}, newRS)
	require.Equal(t, int32(8), n)
	newRS = rs("new", 2, 12, 0)
	n, _ = NewReplicaSetReplicas(d, []*appsv1.ReplicaSet{old, newRS}, newRS)
	require.Equal(t, int32(10), n, "never above spec.replicas")
	r := Defaulted(&appsv1.Deployment{Spec: appsv1.DeploymentSpec{Replicas: d.Spec.Replicas,
		Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType}}})
	n, _ = NewReplicaSetReplicas(r, nil, rs("new", 2, 0, 0))
	require.Equal(t, int32(10), n)
}

// TestNewReplicaSetWaitsForOldPods: an old ReplicaSet scaled down whose
// pods are not gone yet (its status still counts them) holds the new one
// back, so pods alive never pass spec.replicas + maxSurge.
func TestNewReplicaSetWaitsForOldPods(t *testing.T) {
	d := deployment(10, "2", "2")
	old, newRS := rs("old", 1, 6, 6), rs("new", 2, 4, 4)
	old.Status.Replicas = 8 // scaled from 8 to 6, two pods still there
	n, err := NewReplicaSetReplicas(d, []*appsv1.ReplicaSet{old, newRS}, newRS)
	require.NoError(t, err)
	require.Equal(t, int32(4), n, "8 + 4 pods alive are at 10 + 2 already")
	old.Status.Replicas = 6 // they went
	n, _ = NewReplicaSetReplicas(d, []*appsv1.ReplicaSet{old, newRS}, newRS)
	require.Equal(t, int32(6), n)
}

func TestOldReplicaSetsScaleDown(t *testing.T) {
	d := deployment(10, "3", "2")
	// 10 old available, 3 new not yet available: the old may lose 2 (the
	// unavailable budget), not more.
	old, newRS := rs("old", 1, 10, 10), rs("new", 2, 3, 0)
	sc, err := OldReplicaSetsScaleDown(d, []*appsv1.ReplicaSet{old}, newRS, []*appsv1.ReplicaSet{old, newRS})
	require.NoError(t, err)
	require.Equal(t, []Scale{{RS: old, To: 8}}, sc)
	// The new ones became available: the old may go to 10-2-3 = 5... but
	// only as far as availability allows: 13 available - 8 = 5.
	newRS = rs("new", 2, 3, 3)
	sc, _ = OldReplicaSetsScaleDown(d, []*appsv1.ReplicaSet{old}, newRS, []*appsv1.ReplicaSet{old, newRS})
	require.Equal(t, []Scale{{RS: old, To: 5}}, sc)
	// Unavailable old replicas go first, and from the oldest set.
	older, old2 := rs("older", 0, 4, 1), rs("old2", 1, 6, 6)
	newRS = rs("new", 2, 0, 0)
	all := []*appsv1.ReplicaSet{old2, older, newRS}
	sc, _ = OldReplicaSetsScaleDown(d, []*appsv1.ReplicaSet{old2, older}, newRS, all)
	require.Equal(t, []Scale{{RS: older, To: 2}}, sc, "unavailable first, 10 - min 8 = 2 of them; available 7 < 8: nothing more")
	// Nothing old: nothing to do.
	sc, _ = OldReplicaSetsScaleDown(d, nil, newRS, []*appsv1.ReplicaSet{newRS})
	require.Empty(t, sc)
}

// TestRollingUpdateConverges plays a whole rolling update, pods becoming
// available one step after they are asked for, and checks the bounds at
// every step: never more than replicas+maxSurge, never fewer than
// replicas-maxUnavailable available.
func TestRollingUpdateConverges(t *testing.T) {
	for _, tc := range []struct {
		replicas       int32
		surge, unavail string
	}{
		{30, "25%", "25%"}, {10, "0", "1"}, {10, "1", "0"}, {3, "100%", "0"}, {1, "0", "0"}, {7, "2", "3"},
	} {
		d := deployment(tc.replicas, tc.surge, tc.unavail)
		surge, _ := MaxSurge(d)
		unav, _ := MaxUnavailable(d)
		old, newRS := rs("old", 1, tc.replicas, tc.replicas), rs("new", 2, 0, 0)
		for step := 0; ; step++ {
			require.Less(t, step, 100, "%+v does not converge", tc)
			all := []*appsv1.ReplicaSet{old, newRS}
			require.LessOrEqual(t, claimedReplicas(all), tc.replicas+surge, "%+v step %d: pods alive", tc, step)
			require.GreaterOrEqual(t, availableReplicas(all), tc.replicas-unav, "%+v step %d", tc, step)
			if *newRS.Spec.Replicas == tc.replicas && newRS.Status.AvailableReplicas == tc.replicas && *old.Spec.Replicas == 0 {
				break
			}
			n, err := NewReplicaSetReplicas(d, all, newRS)
			require.NoError(t, err)
			newRS.Spec.Replicas = &n
			sc, err := OldReplicaSetsScaleDown(d, []*appsv1.ReplicaSet{old}, newRS, []*appsv1.ReplicaSet{old, newRS})
			require.NoError(t, err)
			for _, s := range sc {
				to := s.To
				old.Spec.Replicas = &to
				old.Status.AvailableReplicas = min(old.Status.AvailableReplicas, to)
			}
			// The new pods asked for become available by the next step;
			// the old ones scaled away are gone by then.
			newRS.Status.Replicas = *newRS.Spec.Replicas
			newRS.Status.AvailableReplicas = *newRS.Spec.Replicas
			old.Status.Replicas = *old.Spec.Replicas
		}
	}
}

func TestRecreate(t *testing.T) {
	a, b := rs("a", 1, 3, 3), rs("b", 2, 0, 0)
	require.Equal(t, []Scale{{RS: a, To: 0}}, RecreateScaleDown([]*appsv1.ReplicaSet{a, b}))
	require.False(t, OldPodsGone([]*appsv1.ReplicaSet{a}))
	a = rs("a", 1, 0, 0)
	a.Status.Replicas = 2 // scaled down, pods still there
	require.False(t, OldPodsGone([]*appsv1.ReplicaSet{a}))
	a.Status.Replicas = 0
	require.True(t, OldPodsGone([]*appsv1.ReplicaSet{a, b}))
}

func TestProportionalScale(t *testing.T) {
	d := deployment(20, "2", "0")
	// One active set takes the whole count.
	only := rs("only", 1, 10, 10)
	sc, err := ProportionalScale(d, only, nil)
	require.NoError(t, err)
	require.Equal(t, []Scale{{RS: only, To: 20}}, sc)
	// Mid-rollout (old 8, new 4; were 10+2 at 10 replicas): 20+2-12 = 10
	// more, spread 2:1, the newest first.
	old, newRS := rs("old", 1, 8, 8), rs("new", 2, 4, 2)
	sc, _ = ProportionalScale(d, newRS, []*appsv1.ReplicaSet{old})
	require.ElementsMatch(t, []Scale{{RS: newRS, To: 8}, {RS: old, To: 14}}, sc)
	// Shrinking to 5 (+2): 12 → 7, 5 fewer, from the oldest first.
	d = deployment(5, "2", "0")
	sc, _ = ProportionalScale(d, newRS, []*appsv1.ReplicaSet{old})
	total := int32(0)
	for _, s := range sc {
		total += s.To
	}
	require.Equal(t, int32(7), total+func() int32 {
		n := int32(0)
		for _, r := range []*appsv1.ReplicaSet{old, newRS} {
			found := false
			for _, s := range sc {
				found = found || s.RS == r
			}
			if !found {
				n += *r.Spec.Replicas
			}
		}
		return n
	}())
	// A saturated new set: the old ones go.
	d = deployment(4, "1", "0")
	newRS = rs("new", 2, 4, 4)
	sc, _ = ProportionalScale(d, newRS, []*appsv1.ReplicaSet{old})
	require.Equal(t, []Scale{{RS: old, To: 0}}, sc)
}

func TestIsScalingEvent(t *testing.T) {
	d := deployment(5, "", "")
	a := rs("a", 1, 3, 3)
	require.False(t, IsScalingEvent(d, []*appsv1.ReplicaSet{a}), "no annotation yet")
	SetReplicaAnnotations(a, d, 1)
	require.False(t, IsScalingEvent(d, []*appsv1.ReplicaSet{a}))
	*d.Spec.Replicas = 7
	require.True(t, IsScalingEvent(d, []*appsv1.ReplicaSet{a}))
}

func TestRevisionsAndRollback(t *testing.T) {
	d := deployment(3, "", "")
	r1 := NewReplicaSet(d, 1, 3)
	require.Equal(t, int64(1), Revision(r1))
	require.Equal(t, "web-"+TemplateHash(&d.Spec.Template, nil), r1.Name)
	require.Equal(t, r1.Spec.Template.Labels[TemplateHashLabel], r1.Spec.Selector.MatchLabels[TemplateHashLabel])
	require.Equal(t, "web", r1.Spec.Selector.MatchLabels["app"])
	require.True(t, *r1.OwnerReferences[0].Controller)
	require.Equal(t, r1, FindNewReplicaSet(d, []*appsv1.ReplicaSet{r1}))

	// set image: a new template, a new set at revision 2.
	d2 := d.DeepCopy()
	d2.Spec.Template.Spec.Containers[0].Image = "nginx:2"
	require.Nil(t, FindNewReplicaSet(d2, []*appsv1.ReplicaSet{r1}))
	require.NotEqual(t, TemplateHash(&d.Spec.Template, nil), TemplateHash(&d2.Spec.Template, nil))
	require.Equal(t, int64(2), NextRevision(nil, []*appsv1.ReplicaSet{r1}))
	r2 := NewReplicaSet(d2, 2, 0)

	// undo: d's template again finds r1, which becomes revision 3 and
	// remembers it was 1.
	require.Equal(t, r1, FindNewReplicaSet(d, []*appsv1.ReplicaSet{r1, r2}))
	rev := NextRevision(r1, []*appsv1.ReplicaSet{r2})
	require.Equal(t, int64(3), rev)
	require.True(t, SetReplicaAnnotations(r1, d, rev))
	require.Equal(t, "1", r1.Annotations[RevisionHistoryAnnotation])
	require.Equal(t, int64(3), Revision(r1))
	require.False(t, SetReplicaAnnotations(r1, d, rev), "nothing changes twice")
	require.Equal(t, int64(3), NextRevision(r1, []*appsv1.ReplicaSet{r2}), "already the newest")
}

func TestHistoryToDelete(t *testing.T) {
	d := deployment(3, "", "")
	limit := int32(2)
	d.Spec.RevisionHistoryLimit = &limit
	var old []*appsv1.ReplicaSet
	for i := range 5 {
		r := rs(string(rune('a'+i)), i, 0, 0)
		r.Annotations = map[string]string{RevisionAnnotation: string(rune('1' + i))}
		old = append(old, r)
	}
	busy := rs("busy", 0, 1, 1)
	got := HistoryToDelete(d, append(old, busy))
	require.Equal(t, []*appsv1.ReplicaSet{old[0], old[1], old[2]}, got)
}

func TestStatusAndConditions(t *testing.T) {
	now := time.Unix(1000, 0)
	d := deployment(4, "1", "1")
	old, newRS := rs("old", 1, 2, 2), rs("new", 2, 3, 1)
	s := Counts(d, []*appsv1.ReplicaSet{old, newRS}, newRS, now)
	require.Equal(t, int32(5), s.Replicas)
	require.Equal(t, int32(3), s.UpdatedReplicas)
	require.Equal(t, int32(3), s.AvailableReplicas)
	require.Equal(t, int32(1), s.UnavailableReplicas)
	require.Equal(t, corev1.ConditionTrue, Condition(s, appsv1.DeploymentAvailable).Status, "3 >= 4-1")
	wait := Progress(d, &s, newRS, true, now)
	require.Equal(t, ReasonNewRSCreated, Condition(s, appsv1.DeploymentProgressing).Reason)
	require.Equal(t, 600*time.Second, wait)

	// No progress for the whole deadline: ProgressDeadlineExceeded.
	d.Status = s
	later := now.Add(601 * time.Second)
	s2 := Counts(d, []*appsv1.ReplicaSet{old, newRS}, newRS, later)
	require.Zero(t, Progress(d, &s2, newRS, false, later))
	c := Condition(s2, appsv1.DeploymentProgressing)
	require.Equal(t, corev1.ConditionFalse, c.Status)
	require.Equal(t, ReasonProgressDeadline, c.Reason)

	// Complete: True with NewReplicaSetAvailable.
	d.Status = s
	newRS = rs("new", 2, 4, 4)
	s3 := Counts(d, []*appsv1.ReplicaSet{newRS}, newRS, later)
	require.True(t, Complete(d, s3))
	Progress(d, &s3, newRS, false, later)
	require.Equal(t, ReasonNewRSAvailable, Condition(s3, appsv1.DeploymentProgressing).Reason)

	// Too few available: Available False.
	d.Status = appsv1.DeploymentStatus{}
	s4 := Counts(d, []*appsv1.ReplicaSet{rs("new", 2, 4, 2)}, nil, now)
	require.Equal(t, corev1.ConditionFalse, Condition(s4, appsv1.DeploymentAvailable).Status)

	// Paused: Unknown DeploymentPaused; resumed: DeploymentResumed then on.
	d.Spec.Paused = true
	Progress(d, &s4, nil, false, now)
	require.Equal(t, ReasonPaused, Condition(s4, appsv1.DeploymentProgressing).Reason)
	d.Spec.Paused, d.Status = false, s4
	s5 := Counts(d, []*appsv1.ReplicaSet{rs("new", 2, 4, 3)}, nil, now)
	Progress(d, &s5, nil, false, now)
	require.Equal(t, corev1.ConditionTrue, Condition(s5, appsv1.DeploymentProgressing).Status)
}
