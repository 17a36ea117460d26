// Package bench runs Kubernetes' own storage benchmarks,
// RunBenchmarkWriteThroughput and RunBenchmarkStoreList of
// k8s.io/apiserver/pkg/storage/testing (unmodified), against four
// implementations of Kubernetes' storage.Interface in one go test -bench run:
//
//	Backend=listwatch-etcd3    listwatch storage/etcd3 through k8scompat
//	Backend=listwatch-cacher   listwatch cacher (over listwatch etcd3) through k8scompat
//	Backend=k8s-etcd3          k8s.io/apiserver/pkg/storage/etcd3
//	Backend=k8s-cacher         k8s.io/apiserver/pkg/storage/cacher (CacheDelegator over k8s etcd3)
//
// Each backend gets a fresh embedded etcd (RunBenchmarkStoreList derives
// exact resource versions from the number of objects, so it needs revision 1
// to be the start), the same JSON codec and an identity transformer. The
// dataset is smaller than Kubernetes' (see dims) so a run fits on a small
// machine; set K8SBENCH_NAMESPACES / K8SBENCH_PODS_PER_NS / K8SBENCH_NODES to
// change it. `make bench-k8s` runs it and prints the side-by-side table
// (cmd/benchtable).
package bench
