package controllers

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/examples/cluster/scheduling"
	"github.com/listwatch/listwatch/examples/nodelifecycle/api"
)

func schedPod(name, node string) *corev1.Pod {
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"}, Spec: corev1.PodSpec{NodeName: node,
		Containers: []corev1.Container{{Name: "c"}}}}
}

// TestSchedulerAccounting: a pod the scheduler assumed on a node counts
// there until the informer shows it bound (then once), an update of the
// still-unbound pod does not drop it, and a deleted or finished pod
// stops counting.
func TestSchedulerAccounting(t *testing.T) {
	s, err := NewScheduler(SchedulerConfig{Client: api.NewClient("http://unused", nil), Informers: &api.Informers{}})
	require.NoError(t, err)
	one := scheduling.Usage{}.Add(schedPod("x", ""))

	p := schedPod("a", "")
	s.mu.Lock()
	s.count("ns/a", "n1", p) // assumed by scheduleOne
	s.mu.Unlock()
	s.observe("ns/a", p) // an unbound update (an adoption patch) while the bind is in flight
	require.Equal(t, one, s.usage["n1"])
	s.observe("ns/a", schedPod("a", "n1")) // the informer shows the binding
	require.Equal(t, one, s.usage["n1"], "counted once")

	s.observe("ns/b", schedPod("b", "n1")) // bound by someone else
	require.Equal(t, one.Add(schedPod("b", "n1")), s.usage["n1"])

	done := schedPod("b", "n1")
	done.Status.Phase = corev1.PodSucceeded
	s.observe("ns/b", done)
	require.Equal(t, one, s.usage["n1"], "a finished pod frees its node")

	gone := schedPod("a", "n1")
	gone.DeletionTimestamp = &metav1.Time{Time: time.Now()}
	s.observe("ns/a", gone)
	require.Equal(t, scheduling.Usage{}, s.usage["n1"])
	s.observe("ns/a", nil)
	require.Empty(t, s.counted)
}
