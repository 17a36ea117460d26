// Package bench measures the node lifecycle example at scale: N nodes with
// their leases and M pods on an embedded etcd, served by the example's API
// server, watched by the controller manager's informers, with the node
// lifecycle controller and the taint manager running. See
// BenchmarkNodeLifecycle.
package bench
