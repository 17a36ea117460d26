package scheduling

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// Usage is what the pods bound (or assumed bound) to a node ask of it.
type Usage struct {
	// Pods counts them.
	Pods int64
	// MilliCPU and Memory sum their requests.
	MilliCPU, Memory int64
}

// Add returns u with pod's requests added.
func (u Usage) Add(pod *corev1.Pod) Usage {
	cpu, mem := Requests(pod)
	return Usage{Pods: u.Pods + 1, MilliCPU: u.MilliCPU + cpu, Memory: u.Memory + mem}
}

// Sub returns u with pod's requests removed.
func (u Usage) Sub(pod *corev1.Pod) Usage {
	cpu, mem := Requests(pod)
	return Usage{Pods: u.Pods - 1, MilliCPU: u.MilliCPU - cpu, Memory: u.Memory - mem}
}

// Requests sums the CPU (millicores) and memory (bytes) requests of pod's
// containers.
func Requests(pod *corev1.Pod) (milliCPU, memory int64) {
	for _, c := range pod.Spec.Containers {
		if q, ok := c.Resources.Requests[corev1.ResourceCPU]; ok {
			milliCPU += q.MilliValue()
		}
		if q, ok := c.Resources.Requests[corev1.ResourceMemory]; ok {
			memory += q.Value()
		}
	}
	return milliCPU, memory
}

// allocatable returns node's allocatable pods, millicores and memory.
func allocatable(node *corev1.Node) (pods, milliCPU, memory int64) {
	a := node.Status.Allocatable
	if q, ok := a[corev1.ResourcePods]; ok {
		pods = q.Value()
	}
	if q, ok := a[corev1.ResourceCPU]; ok {
		milliCPU = q.MilliValue()
	}
	if q, ok := a[corev1.ResourceMemory]; ok {
		memory = q.Value()
	}
	return pods, milliCPU, memory
}

// Filter returns why pod may not go to node with usage, "" when it may.
func Filter(node *corev1.Node, pod *corev1.Pod, usage Usage) string {
	ready := false
	for _, c := range node.Status.Conditions {
		if c.Type == corev1.NodeReady {
			ready = c.Status == corev1.ConditionTrue
		}
	}
	if !ready {
		return "node is not Ready"
	}
	if node.Spec.Unschedulable {
		return "node is unschedulable"
	}
	for i := range node.Spec.Taints {
		taint := &node.Spec.Taints[i]
		if taint.Effect != corev1.TaintEffectNoSchedule && taint.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		if !slices.ContainsFunc(pod.Spec.Tolerations, func(t corev1.Toleration) bool { return Tolerates(t, taint) }) {
			return fmt.Sprintf("untolerated taint %s:%s", taint.Key, taint.Effect)
		}
	}
	maxPods, cpu, mem := allocatable(node)
	reqCPU, reqMem := Requests(pod)
	switch {
	case usage.Pods+1 > maxPods:
		return "too many pods"
	case reqCPU > 0 && usage.MilliCPU+reqCPU > cpu:
		return "insufficient cpu"
	case reqMem > 0 && usage.Memory+reqMem > mem:
		return "insufficient memory"
	}
	return ""
}

// MaxScore is the best score.
const MaxScore = 100

// Score is the least-allocated score of pod on node with usage, 0 to
// MaxScore: the mean free fraction of CPU and memory once the pod is
// there. Pods without requests count as kube-scheduler's defaults (100
// millicores, 200 MiB) so that they spread too.
func Score(node *corev1.Node, pod *corev1.Pod, usage Usage) int64 {
	_, cpu, mem := allocatable(node)
	reqCPU, reqMem := Requests(pod)
	if reqCPU == 0 {
		reqCPU = 100
	}
	if reqMem == 0 {
		reqMem = 200 << 20
	}
	free := func(used, capacity int64) int64 {
		if capacity <= 0 || used > capacity {
			return 0
		}
		return (capacity - used) * MaxScore / capacity
	}
	// The default requests stand in for every counted pod without any.
	usedCPU := max(usage.MilliCPU, usage.Pods*100) + reqCPU
	usedMem := max(usage.Memory, usage.Pods*(200<<20)) + reqMem
	return (free(usedCPU, cpu) + free(usedMem, mem)) / 2
}

// Pick chooses pod's node among nodes, whose usage is usage[name]: the
// best score among those that pass Filter; a tie goes to the node after
// the last choice (turn, which the caller advances). It returns "" and
// each node's reason when none fits.
func Pick(nodes []*corev1.Node, pod *corev1.Pod, usage map[string]Usage, turn int) (string, map[string]string) {
	best, bestScore := "", int64(-1)
	var tied []string
	reasons := map[string]string{}
	for _, n := range nodes {
		u := usage[n.Name]
		if why := Filter(n, pod, u); why != "" {
			reasons[n.Name] = why
			continue
		}
		s := Score(n, pod, u)
		switch {
		case s > bestScore:
			best, bestScore, tied = n.Name, s, []string{n.Name}
		case s == bestScore:
			tied = append(tied, n.Name)
		}
	}
	if best == "" {
		return "", reasons
	}
	slices.Sort(tied)
	return tied[turn%len(tied)], nil
}

// Tolerates reports whether t tolerates taint: same effect (or any, when
// t names none), same key (or any, for an Exists toleration without a
// key), and, for operator Equal (the default), the same value.
func Tolerates(t corev1.Toleration, taint *corev1.Taint) bool {
	if t.Effect != "" && t.Effect != taint.Effect {
		return false
	}
	if t.Key != "" && t.Key != taint.Key {
		return false
	}
	switch t.Operator {
	case corev1.TolerationOpExists:
		return true
	case corev1.TolerationOpEqual, "":
		return t.Key != "" && t.Value == taint.Value
	}
	return false
}
