// Package scheduling is the pure logic of a scheduler on k8s.io/api
// types: the filters a node must pass for a pod (NodeReady True, not
// unschedulable, every NoSchedule and NoExecute taint tolerated, room for
// one more pod and for the pod's CPU and memory requests) and the
// least-allocated score that spreads pods over the nodes that remain.
//
// The semantics are kube-scheduler's plugins (NodeUnschedulable,
// TaintToleration, NodeResourcesFit with LeastAllocated); the code is
// this project's own.
package scheduling
