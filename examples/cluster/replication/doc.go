// Package replication is the pure logic of a ReplicaSet controller on
// k8s.io/api types: expectations (a controller never creates or deletes a
// pod twice because its informer has not yet seen its own writes),
// slow-start batches of creates, adoption and release of pods by
// ownerReferences and selectors, which pods to delete first, and a
// ReplicaSet's status.
//
// The semantics are Kubernetes' (pkg/controller/replicaset and
// controller_utils); the code is this project's own.
package replication
