package api

import (
	appsv1 "k8s.io/api/apps/v1"

	"github.com/listwatch/listwatch/server"
	"github.com/listwatch/listwatch/storage"
)

// The workload resources of apps/v1 the cluster example serves beside
// nodes, pods and leases.
var (
	Deployments = Kind{Group: "apps", Version: "v1", Plural: "deployments", Kind: "Deployment", Namespaced: true}
	ReplicaSets = Kind{Group: "apps", Version: "v1", Plural: "replicasets", Kind: "ReplicaSet", Namespaced: true}
)

// The Validate hooks of the workload resources.
var (
	validDeployment = decodes(func() any { return &appsv1.Deployment{} })
	validReplicaSet = decodes(func() any { return &appsv1.ReplicaSet{} })
)

// replicaColumns are the columns kubectl users know for replicated
// workloads. The server's columns are JSON paths, so READY is the count
// of ready replicas, not Kubernetes' "ready/desired" pair.
func replicaColumns(first ...server.PrinterColumn) []server.PrinterColumn {
	return append(first,
		server.PrinterColumn{Name: "Images", Type: "string", JSONPath: ".spec.template.spec.containers[0].image", Priority: 1},
		server.PrinterColumn{Name: "Selector", Type: "string", JSONPath: ".spec.selector.matchLabels.app", Priority: 1})
}

// AppsResources returns the server resources of deployments and
// replicasets over their storages, with /status and /scale as
// kube-apiserver serves them (kubectl scale and rollout use them).
func AppsResources(deployments, replicasets storage.Interface) []server.Resource {
	scale := &server.ScaleSubresource{SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas"}
	return []server.Resource{
		{Group: "apps", Version: "v1", Plural: "deployments", Kind: "Deployment", ShortNames: []string{"deploy"},
			Namespaced: true, Storage: deployments, KeyRoot: KeyRoots[Deployments], Validate: validDeployment,
			Subresources: &server.Subresources{Status: true, Scale: scale},
			PrinterColumns: replicaColumns(
				server.PrinterColumn{Name: "Ready", Type: "integer", JSONPath: ".status.readyReplicas", Description: "Ready replicas."},
				server.PrinterColumn{Name: "Up-to-date", Type: "integer", JSONPath: ".status.updatedReplicas", Description: "Replicas of the current template."},
				server.PrinterColumn{Name: "Available", Type: "integer", JSONPath: ".status.availableReplicas", Description: "Replicas available to users."},
				server.PrinterColumn{Name: "Desired", Type: "integer", JSONPath: ".spec.replicas", Description: "Desired replicas."})},
		{Group: "apps", Version: "v1", Plural: "replicasets", Kind: "ReplicaSet", ShortNames: []string{"rs"},
			Namespaced: true, Storage: replicasets, KeyRoot: KeyRoots[ReplicaSets], Validate: validReplicaSet,
			Subresources: &server.Subresources{Status: true, Scale: scale},
			PrinterColumns: replicaColumns(
				server.PrinterColumn{Name: "Desired", Type: "integer", JSONPath: ".spec.replicas"},
				server.PrinterColumn{Name: "Current", Type: "integer", JSONPath: ".status.replicas"},
				server.PrinterColumn{Name: "Ready", Type: "integer", JSONPath: ".status.readyReplicas"})},
	}
}
