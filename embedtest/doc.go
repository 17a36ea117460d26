// Package embedtest starts real embedded etcd servers for tests, benchmarks
// and the demo: one member (Start, StartServer) or a three-member cluster
// (StartCluster), each on 127.0.0.1 with ports chosen by the kernel, data in
// a temporary directory, and quiet logs unless LISTWATCH_ETCD_LOGS=1 or
// Options.Logs is set. Members and clients are built by the etcdrun
// package (what a production binary uses; this package links testing), and
// Proxy stands in for a frozen etcd. The members of a cluster reach each
// other through proxies the cluster owns: Cluster.Partition cuts one off
// its peers (a network partition) until Cluster.Heal, and Cluster.Close
// closes every peer connection, whatever the members left open.
//
// Share one server per test package from TestMain and give every test its
// own key prefix (Prefix(t)) rather than starting a server per test:
//
//	var etcd *embedtest.Server
//
//	func TestMain(m *testing.M) {
//		etcd = embedtest.MustStartServer(embedtest.Options{})
//		code := m.Run()
//		etcd.Close()
//		os.Exit(code)
//	}
package embedtest
