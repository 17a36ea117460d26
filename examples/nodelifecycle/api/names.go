package api

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Well-known names the simulator and the controllers agree on, as
// Kubernetes spells them.
const (
	// ZoneLabel carries a node's zone.
	ZoneLabel = "topology.kubernetes.io/zone"
	// LeaseNamespace holds the nodes' heartbeat leases (one per node, named
	// like it).
	LeaseNamespace = "kube-node-lease"
	// TaintUnreachable is put on nodes whose kubelet stopped heartbeating
	// (NodeReady Unknown).
	TaintUnreachable = "node.kubernetes.io/unreachable"
	// TaintNotReady is put on nodes whose kubelet reports NodeReady False.
	TaintNotReady = "node.kubernetes.io/not-ready"
	// PodNodeNameIndex indexes pods by spec.nodeName in the pod informer.
	PodNodeNameIndex = "spec.nodeName"
)

// Kind names one served resource for the client.
type Kind struct {
	// Group and Version are the API group ("" for core) and version.
	Group, Version string
	// Plural is the path segment, Kind the object kind.
	Plural, Kind string
	// Namespaced tells whether objects live in namespaces.
	Namespaced bool
}

// The example's resources.
var (
	Nodes  = Kind{Version: "v1", Plural: "nodes", Kind: "Node"}
	Pods   = Kind{Version: "v1", Plural: "pods", Kind: "Pod", Namespaced: true}
	Leases = Kind{Group: "coordination.k8s.io", Version: "v1", Plural: "leases", Kind: "Lease", Namespaced: true}
)

// AllKinds are the resources the APIServer serves.
var AllKinds = []Kind{Nodes, Pods, Leases, Deployments, ReplicaSets}

// GroupVersionResource returns k's resource name.
func (k Kind) GroupVersionResource() schema.GroupVersionResource {
	return schema.GroupVersionResource{Group: k.Group, Version: k.Version, Resource: k.Plural}
}

// GroupVersionKind returns k's kind name.
func (k Kind) GroupVersionKind() schema.GroupVersionKind {
	return schema.GroupVersionKind{Group: k.Group, Version: k.Version, Kind: k.Kind}
}

// path is the URL path of k's collection in namespace ns ("" for all
// namespaces or a cluster-scoped resource), and of name in it when name is
// not "".
func (k Kind) path(ns, name string) string {
	p := "/apis/" + k.Group + "/" + k.Version
	if k.Group == "" {
		p = "/api/" + k.Version
	}
	if k.Namespaced && ns != "" {
		p += "/namespaces/" + ns
	}
	p += "/" + k.Plural
	if name != "" {
		p += "/" + name
	}
	return p
}
