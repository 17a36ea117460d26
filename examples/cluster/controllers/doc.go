// Package controllers runs the cluster example's control plane over the
// HTTP API's List-Watch: a controller manager (leader-elected on etcd)
// with the Deployment and ReplicaSet controllers and the library's garbage
// collector (package gc, manager.Options.GarbageCollector) beside
// examples/nodelifecycle's node lifecycle controller and taint manager,
// all on one set of shared informers; and a scheduler. Each controller
// reads only its informers' caches and writes through the API.
//
// The decisions are the pure packages' (rollout, replication,
// scheduling); here they are wired to informers, work queues and
// requests.
package controllers
