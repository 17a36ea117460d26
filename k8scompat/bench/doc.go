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
// (cmd/benchtable), which ends with the verdict of issue 25's goal 5.
//
// # The peer benchmarks
//
// BenchmarkPeer* (peer_test.go, peer_capacity_test.go,
// idle_watchers_test.go) run one workload on the two caches only; `make
// bench-peer` runs them all and cmd/benchtable prints the side-by-side
// table, the fan-out capacity table, issue 25's goals (goal 3 as issue 36
// sets it: capacity) with every run's measure and verdict, and the summary
// of the fan-out CPU profile. Their knobs, all environment variables:
//
//	K8SBENCH_PEER_OBJECTS        pods cached (10000); memory and lists also run at 5x
//	K8SBENCH_PEER_UPDATES        updates per unpaced fan-out and slow-watcher run (2000)
//	K8SBENCH_PEER_WATCHERS       unpaced fan-out watcher counts, comma-separated ("10,100,1000")
//	K8SBENCH_PEER_WIDE_WATCHERS  watchers of the wide unpaced fan-out (10000; 0: none)
//	K8SBENCH_PEER_WIDE_UPDATES   updates of the wide fan-out (500)
//	K8SBENCH_PEER_CAPACITY_WATCHERS  watcher counts of the capacity search, comma-separated ("1000,10000")
//	K8SBENCH_PEER_WRITE_RATE     one paced write rate (puts/s) for the capacity search instead of a ladder
//	K8SBENCH_PEER_WRITE_RATES    the capacity search's ladder of write rates (puts/s), comma-separated
//	                             (default: 100k,200k,300k,400k,600k,800k,1.2M,1.6M,2.4M,3.2M delivered events/s, divided by the watchers)
//	K8SBENCH_PEER_STEP_SECONDS   seconds of writing per capacity step (4; at least 50 puts)
//	K8SBENCH_PEER_DISTINCT=0     every pod gets the same padding (default: each its own), except in memory, which measures both
//	K8SBENCH_PEER_LISTMODES      list modes, comma-separated ("RV=0,RV=consistent,Paged=500")
//	K8SBENCH_PEER_IDLE           idle watcher counts, comma-separated ("10000")
//	K8SBENCH_PEER_RUNS           runs of each scenario (1; `make bench-peer` sets 3)
//	K8SBENCH_PEER_CPUPROFILE     directory for the fan-out CPU profiles (default: a new temporary directory)
//	K8SBENCH_PEER_CAPACITY_PROFILE  directory for a CPU profile of each capacity step (default: none)
//	K8SBENCH_PEER_LISTPROFILE    directory for CPU profiles of each PeerList measurement (default: none)
//	K8SBENCH_LW_ENCODED=1        listwatch's cacher keeps objects encoded (cacher.Config.Codec)
//	K8SBENCH_LW_COALESCE         listwatch's cacher.Config.WakeCoalesce, a Go duration (0s: its default)
//	K8SBENCH_LW_NOPACK=1         listwatch's cacher keeps objects unpacked (cacher.Config.NoPacking)
//	KUBE_TEST_API_TYPE           the codec: application/json (default) or application/vnd.kubernetes.protobuf
//
// Capacity: BenchmarkPeerCapacity climbs the ladder for each cache (the
// same cache through the ladder, fresh watchers at each step) until a step
// does not hold: a watcher lost (ended, or short of an update 15 s after
// the last put), p99 from put to receipt above 100 ms, or the paced writer
// (up to 32 puts in flight) short of 95% of the rate. A cache's capacity is
// the delivered events/s of its last step that held. CPU per delivered
// event is the process's CPU (user+system) over a step divided by the
// events it delivered; the caches are compared at the highest rate both
// held. The harness (Backend=harness: harnessSource, one etcd watch, one
// decode per event, a channel send per watcher) climbs the same ladder
// with the same writer, etcd and watchers: its capacity is what a source
// that only hands each event to each reader reaches on this machine (not a
// bound on a cache: it wakes each reader for each event, which a cache that
// coalesces wake-ups does not), and its CPU per event at the caches' equal
// load is shown beside theirs with their ratio net of it.
// Each watcher's reader has its own stop channel and counts what it
// received once, at its end, so that the readers' own cost is what a
// client's would be, not contention between 10,000 of them. The
// unpaced fan-outs (BenchmarkPeerFanout) report only how many watches each
// cache ended.
//
// Memory: BenchmarkPeerMemory measures each cache twice, whatever
// K8SBENCH_PEER_DISTINCT says, on pods whose ~760-byte padding annotation
// is the same in all (Padding=shared; a cache that shares equal strings
// between objects stores it once) and on pods each with a padding of its
// own (Padding=distinct; it cannot share it). cmd/benchtable judges goal
// 1's memory on the distinct padding and shows the shared figure beside it.
//
// Logs: listwatch's stores and caches log to stderr at level Warn and above
// (benchLog), so that their informational lines do not come among the
// results; go test passes the test binary's stderr on with its stdout, so
// warnings still show in cmd/benchtable's echo of the input.
//
// Runs: each scenario runs K8SBENCH_PEER_RUNS times in a row, each run
// measuring both caches on fresh etcds, listwatch's first in odd runs and
// Kubernetes' first in even ones. The sub-benchmarks are named
// <scenario>/Backend=<cache>/Run=<r>[/<list mode>], so a -bench pattern
// ending in Backend=<cache> selects every run.
//
// A smoke run of the capacity search (a harness check, not a measure):
//
//	K8SBENCH_PEER_OBJECTS=2000 K8SBENCH_PEER_CAPACITY_WATCHERS=100 K8SBENCH_PEER_WRITE_RATES=100,300,1000 \
//	K8SBENCH_PEER_STEP_SECONDS=2 go test -run '^$' -bench PeerCapacity -benchtime 1x ./bench | go run ./cmd/benchtable
//
// CPU profile: the unpaced fan-out to 1,000 watchers writes the process's
// CPU profile from its first put to its last delivery, for each cache and
// run (both, so that profiling costs each the same), to
// fanout-w1000-<cache>-run<r>.pprof, and prints a line
// "peer-cpuprofile-<cache>: <path>" per file; cmd/benchtable merges
// listwatch's and prints its top functions with go tool pprof -top. The
// benchmarks also print "peer-runs", "peer-listwatch-mode", "peer-codec",
// "peer-objects", "peer-updates" and "peer-padding" lines for the goals
// table.
package bench
