package simulator

import (
	"fmt"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/listwatch/listwatch/examples/nodelifecycle/api"
)

// PodKind says what a simulated pod is.
type PodKind string

// The kinds of simulated pods, in the order each node gets them.
const (
	// PodPlain tolerates nothing: it is evicted as soon as its node gets
	// a NoExecute taint.
	PodPlain PodKind = "plain"
	// PodTolerating tolerates node.kubernetes.io/unreachable NoExecute
	// for Config.TolerationSeconds.
	PodTolerating PodKind = "tolerating"
	// PodDaemon is owned by a DaemonSet and never evicted.
	PodDaemon PodKind = "daemon"
)

// KindLabel is the pod label carrying its PodKind.
const KindLabel = "sim.listwatch.dev/kind"

// podKind is the kind of a node's i-th pod: one daemon pod, then
// tolerating and plain pods in turn.
func podKind(i int) PodKind {
	switch {
	case i == 0:
		return PodDaemon
	case i%2 == 1:
		return PodPlain
	}
	return PodTolerating
}

// NodeName is the name of zone z's j-th node: node-a0, node-a1, node-b0 ...
func NodeName(z, j int) string { return fmt.Sprintf("node-%s%d", zoneLetter(z), j) }

// ZoneName is zone z's name: zone-a, zone-b ...
func ZoneName(z int) string { return "zone-" + zoneLetter(z) }

func zoneLetter(z int) string {
	if z < 26 {
		return string(rune('a' + z))
	}
	return fmt.Sprintf("z%d", z)
}

// readyCondition is a NodeReady True condition as a kubelet posts it.
func readyCondition(now time.Time) corev1.NodeCondition {
	return corev1.NodeCondition{Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
		Message: "kubelet is posting ready status", LastHeartbeatTime: metav1.NewTime(now), LastTransitionTime: metav1.NewTime(now)}
}

// nodeResources is a simulated node's capacity and allocatable (kubectl
// describe node divides the pods' requests by them).
var nodeResources = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"),
	corev1.ResourceMemory: resource.MustParse("16Gi"), corev1.ResourcePods: resource.MustParse("110")}

// newNode is a Ready node in zone.
func newNode(name, zone string, now time.Time) *corev1.Node {
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{api.ZoneLabel: zone,
			"kubernetes.io/hostname": name}},
		Status: corev1.NodeStatus{Conditions: []corev1.NodeCondition{readyCondition(now)},
			Capacity: nodeResources.DeepCopy(), Allocatable: nodeResources.DeepCopy(),
			NodeInfo: corev1.NodeSystemInfo{KubeletVersion: "v1.34.0-sim", OperatingSystem: "linux", Architecture: "amd64"}},
	}
}

// newLease is node's heartbeat lease, renewed at now.
func newLease(node string, durationSeconds int32, now time.Time) *coordinationv1.Lease {
	renew := metav1.NewMicroTime(now)
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: node, Namespace: api.LeaseNamespace},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: &node, LeaseDurationSeconds: &durationSeconds,
			RenewTime: &renew},
	}
}

// newPod is node's i-th pod in namespace ns. Tolerating pods tolerate
// for tolerationSeconds times i/2: the first for tolerationSeconds, the
// next for twice as long, and so on.
func newPod(ns, node string, i int, tolerationSeconds int64) *corev1.Pod {
	kind := podKind(i)
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%s-%d", node, kind, i), Namespace: ns,
			Labels: map[string]string{KindLabel: string(kind)}},
		Spec:   corev1.PodSpec{NodeName: node, Containers: []corev1.Container{{Name: "app", Image: "registry.k8s.io/pause:3.10"}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning},
	}
	switch kind {
	case PodTolerating:
		secs := tolerationSeconds * int64(i/2)
		p.Spec.Tolerations = []corev1.Toleration{{Key: api.TaintUnreachable, Operator: corev1.TolerationOpExists,
			Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &secs}}
	case PodDaemon:
		yes := true
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "DaemonSet", Name: "node-agent",
			UID: types.UID("daemonset-node-agent"), Controller: &yes}}
	}
	return p
}
