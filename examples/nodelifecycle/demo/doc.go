// Package demo runs the node lifecycle example end to end: embedded etcd
// (or a given one), the API server with nodes, pods and leases, the
// kubelet simulator, and the controller manager (node lifecycle controller
// and taint manager) over shared informers. Run plays a scripted scenario
// that narrates what happens, with resourceVersions and timestamps, and
// checks each step; Serve keeps the cluster running for kubectl.
package demo
