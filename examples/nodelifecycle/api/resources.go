package api

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/server"
	"github.com/listwatch/listwatch/storage"
)

// KeyRoots are the storage key roots of the resources, as kube-apiserver
// names them below /registry.
var KeyRoots = map[Kind]string{Nodes: "/minions", Pods: "/pods", Leases: "/leases",
	Deployments: "/deployments", ReplicaSets: "/replicasets"}

// PodAttrs returns a pod's labels and the fields a pod fieldSelector may
// name: metadata.name, metadata.namespace, spec.nodeName and status.phase
// (what kubectl describe node asks for).
func PodAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, nil, fmt.Errorf("api: pod attributes of %T", obj)
	}
	node, _, _ := unstructured.NestedString(u.Object, "spec", "nodeName")
	phase, _, _ := unstructured.NestedString(u.Object, "status", "phase")
	return labels.Set(u.GetLabels()), fields.Set{"metadata.name": u.GetName(), "metadata.namespace": u.GetNamespace(),
		"spec.nodeName": node, "status.phase": phase}, nil
}

// Resources returns the server resources of nodes, pods and leases over
// their storages (each an etcd3 store or cacher of unstructured objects).
// Pods have /status: a pod's status is written there only (by its
// kubelet), as kube-apiserver serves pods. Every write must decode into
// the k8s.io/api type (corev1.Node, corev1.Pod, coordinationv1.Lease): a malformed object, such as a pod
// with "containers": "not-a-list", is refused with 400.
func Resources(nodes, pods, leases storage.Interface) []server.Resource {
	return []server.Resource{
		{Version: "v1", Plural: "nodes", Kind: "Node", ShortNames: []string{"no"}, Storage: nodes, KeyRoot: KeyRoots[Nodes],
			Validate: validNode,
			PrinterColumns: []server.PrinterColumn{
				{Name: "Ready", Type: "string", JSONPath: ".status.conditions[0].status", Description: "The NodeReady condition."},
				{Name: "Reason", Type: "string", JSONPath: ".status.conditions[0].reason"},
				{Name: "Zone", Type: "string", JSONPath: `.metadata.labels.topology\.kubernetes\.io/zone`},
				{Name: "Taint", Type: "string", JSONPath: ".spec.taints[0].key", Description: "The first taint."},
			}},
		{Version: "v1", Plural: "pods", Kind: "Pod", ShortNames: []string{"po"}, Namespaced: true, Storage: pods,
			KeyRoot: KeyRoots[Pods], GetAttrs: PodAttrs, SelectableFields: []string{"spec.nodeName", "status.phase"},
			Validate: validPod, Subresources: &server.Subresources{Status: true},
			PrinterColumns: []server.PrinterColumn{
				{Name: "Ready", Type: "boolean", JSONPath: ".status.containerStatuses[0].ready", Description: "The first container is ready."},
				{Name: "Status", Type: "string", JSONPath: ".status.phase"},
				{Name: "Node", Type: "string", JSONPath: ".spec.nodeName"},
				{Name: "IP", Type: "string", JSONPath: ".status.podIP", Priority: 1},
			}},
		{Group: "coordination.k8s.io", Version: "v1", Plural: "leases", Kind: "Lease", Namespaced: true, Storage: leases,
			KeyRoot: KeyRoots[Leases], Validate: validLease,
			PrinterColumns: []server.PrinterColumn{
				{Name: "Holder", Type: "string", JSONPath: ".spec.holderIdentity"},
				{Name: "Renewed", Type: "date", JSONPath: ".spec.renewTime"},
			}},
	}
}
