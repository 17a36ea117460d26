// Package rollout is the pure arithmetic of a Deployment controller, on
// k8s.io/api's apps/v1 types: defaults, the rolling update's fenceposts
// (maxSurge, maxUnavailable) and its scale-up and scale-down steps,
// Recreate, proportional scaling, revisions and rollback, history
// cleanup, and the Deployment's status with its Progressing and Available
// conditions. Nothing here reads or writes the API: the controller asks,
// then acts on the answers.
//
// The semantics are Kubernetes' (pkg/controller/deployment), with one
// difference: the rolling update's surge counts an old ReplicaSet's pods
// until they are gone (its status.replicas), not only its spec.replicas,
// so at most spec.replicas + maxSurge pods are ever alive at once (see
// NewReplicaSetReplicas). The code is this project's own.
package rollout
