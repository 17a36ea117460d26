package bench

import (
	"fmt"
	"os"
	"slices"
	"sync"
)

// peerRuns is how many times each peer scenario runs (K8SBENCH_PEER_RUNS,
// default 1). Run r of a scenario measures both caches, listwatch's first
// in odd runs and Kubernetes' first in even ones (peerOrder), so that a
// drift in the machine's load does not always favour the same cache.
func peerRuns() int { return envInt("K8SBENCH_PEER_RUNS", 1) }

// peerOrder is the order in which run r (from 1) measures the caches.
func peerOrder(run int) []backend {
	out := peerBackends()
	if run%2 == 0 {
		slices.Reverse(out)
	}
	return out
}

// peerName is the sub-benchmark name of one cache in one run: the backend
// before the run, so that -bench patterns ending in Backend=<name> still
// select every run. cmd/benchtable averages the runs in its side-by-side
// table and shows each run in its goals table.
func peerName(scenario, backend string, run int) string {
	return fmt.Sprintf("%s/Backend=%s/Run=%d", scenario, backend, run)
}

// peerConfig prints, once per process, the lines that tell cmd/benchtable
// how the peer benchmarks ran. They follow the benchmark format's
// configuration lines ("key: value"), which benchmark tools carry along and
// which are not results.
var peerConfig = sync.OnceFunc(func() {
	mode := "default"
	if lwEncoded() {
		mode = "encoded (K8SBENCH_LW_ENCODED=1, cacher.Config.Codec)"
	}
	apiType := os.Getenv("KUBE_TEST_API_TYPE")
	if apiType == "" {
		apiType = "application/json"
	}
	padding := "shared (K8SBENCH_PEER_DISTINCT=0)"
	if distinctPadding {
		padding = "distinct"
	}
	fmt.Printf("peer-runs: %d\npeer-listwatch-mode: %s\npeer-codec: %s\npeer-objects: %d\npeer-updates: %d\npeer-padding: %s\n",
		peerRuns(), mode, apiType, peerObjects(), peerUpdates(), padding)
})
