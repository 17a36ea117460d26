// Package simulator is a kubelet simulator for the node lifecycle example:
// N nodes in Z zones (topology.kubernetes.io/zone), each renewing its Lease
// in kube-node-lease as its heartbeat and posting NodeReady True, with pods
// bound to them: plain pods, pods tolerating node.kubernetes.io/unreachable
// NoExecute for a while, and daemon pods (owned by a DaemonSet). It can be
// told to stop and resume the heartbeats of nodes, a zone or all of them.
//
// Everything goes through the HTTP API, as kubelets do.
package simulator
