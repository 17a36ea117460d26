// Package bench measures the cluster example at scale (make
// bench-cluster): simulated nodes, one large Deployment, the time until
// every replica is available, pod startup latency as a watcher sees it,
// a rolling update of every pod, API requests and etcd reads per pod, and
// the controller manager's heap. See BenchmarkCluster.
package bench
