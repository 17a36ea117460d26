// Package cluster is the seeds' story end to end over List-Watch: kubectl
// creates a Deployment, a leader-elected controller manager turns it into
// ReplicaSets and Pods, a scheduler binds the Pods to simulated nodes and
// simulated kubelets run them, every step woken by a watch.
//
// Its packages, bottom up:
//
//	rollout      the Deployment controller's arithmetic: rolling update and Recreate, revisions, status and conditions
//	replication  the ReplicaSet controller's: expectations, slow-start batches, adoption and release, pod ranking
//	scheduling   the scheduler's filters (Ready, taints, capacity) and least-allocated score
//	controllers  the controllers over the informers and the HTTP API, and the controller manager
//	kubelet      simulated kubelets: bound pods become Running and Ready after a delay
//	demo         the narrated, self-checking walk with the real kubectl (make demo-cluster)
//
// The garbage collector is the library's (package gc), run by the
// controller manager. The API server is examples/nodelifecycle/api's, which serves apps/v1
// deployments and replicasets beside nodes, pods and leases.
package cluster
