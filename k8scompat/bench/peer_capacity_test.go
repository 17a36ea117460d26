package bench

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	k8sstorage "k8s.io/apiserver/pkg/storage"
	"k8s.io/klog/v2"

	"github.com/listwatch/listwatch/embedtest"
)

// capacityP99 is the latest p99 (put to receipt) at which a rate still
// holds.
const capacityP99 = 100 * time.Millisecond

// capacityPace is the share of the asked rate the writer must reach for a
// step to count: a writer that cannot offer the rate measures nothing.
const capacityPace = 0.95

// capacityProbeWait is how long a step waits after its last put for the
// watchers to get every update; one still short of it then is lost.
const capacityProbeWait = 15 * time.Second

// defaultDeliveryLadder is the default ladder in delivered events per
// second; each step's write rate is it divided by the number of watchers.
var defaultDeliveryLadder = []int{100_000, 200_000, 300_000, 400_000, 600_000, 800_000, 1_200_000, 1_600_000, 2_400_000, 3_200_000}

// capacityWatcherCounts are the watcher counts of the capacity search
// (K8SBENCH_PEER_CAPACITY_WATCHERS, "1000,10000").
func capacityWatcherCounts() []int {
	return positiveInts(envString("K8SBENCH_PEER_CAPACITY_WATCHERS", "1000,10000"))
}

// capacityRates is the ladder of write rates (puts/s) climbed with
// watchers watchers: K8SBENCH_PEER_WRITE_RATE (one rate), else
// K8SBENCH_PEER_WRITE_RATES (a comma list), else defaultDeliveryLadder
// divided by watchers. Ascending, without repeats.
func capacityRates(watchers int) []int {
	var rates []int
	switch {
	case envString("K8SBENCH_PEER_WRITE_RATE", "") != "":
		rates = positiveInts(envString("K8SBENCH_PEER_WRITE_RATE", ""))[:1]
	case envString("K8SBENCH_PEER_WRITE_RATES", "") != "":
		rates = positiveInts(envString("K8SBENCH_PEER_WRITE_RATES", ""))
	default:
		for _, d := range defaultDeliveryLadder {
			rates = append(rates, max(1, d/watchers))
		}
	}
	out := rates[:0]
	for _, r := range rates {
		if len(out) == 0 || r > out[len(out)-1] {
			out = append(out, r)
		}
	}
	return out
}

// capacityStepUpdates is the number of puts of one step at rate:
// K8SBENCH_PEER_STEP_SECONDS (4) of writing, at least 50.
func capacityStepUpdates(rate int) int {
	return max(50, rate*envInt("K8SBENCH_PEER_STEP_SECONDS", 4))
}

// positiveInts parses a comma list, keeping the positive integers.
func positiveInts(s string) []int {
	var out []int
	for _, f := range strings.Split(s, ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(f)); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	return out
}

// BenchmarkPeerCapacity searches each cache's fan-out capacity: the most
// events per second it delivers to W watchers of every pod with every
// watcher getting every event and a p99 (put to receipt) of at most
// 100 ms. For each W of K8SBENCH_PEER_CAPACITY_WATCHERS and each run, each
// cache (on an etcd of its own, the same cache through the whole ladder,
// fresh watchers at each step) climbs the ladder of write rates
// (capacityRates), one paced writer updating random pods at the step's
// rate for K8SBENCH_PEER_STEP_SECONDS, and stops at the first step that
// does not hold: a watcher lost (ended by the cache, or short of an update
// capacityProbeWait after the last put), p99 above 100 ms, or the writer
// short of 95% of the rate. Each step is a sub-benchmark
// Watchers=W/Backend=<cache>/Run=r/Rate=<puts/s> reporting events/s
// (delivered), p50-ms, p99-ms, cpu-ns/event (process CPU over the step
// divided by delivered events), terminated, lost, write/s (achieved) and
// held (1 or 0). Then the harness itself (harnessSource, Backend=harness)
// climbs the same ladder (its capacity: what a source that only hands each
// event to each reader reaches here), and cmd/benchtable shows its CPU per event
// beside the caches' at the highest rate both held and their ratio net
// of it.
func BenchmarkPeerCapacity(b *testing.B) {
	klog.SetLogger(logr.Discard())
	peerConfig()
	objects := peerObjects()
	for _, watchers := range capacityWatcherCounts() {
		rates := capacityRates(watchers)
		for run := 1; run <= peerRuns(); run++ {
			for _, be := range append(peerOrder(run), harnessBackend) {
				b.Run(peerName(fmt.Sprintf("Watchers=%d", watchers), be.name, run), func(b *testing.B) {
					srv := embedtest.Start(b)
					primePods(b, srv, objects)
					store := be.new(b, srv)
					for _, rate := range rates {
						ok := false
						b.Run(fmt.Sprintf("Rate=%d", rate), func(b *testing.B) {
							ok = capacityStep(b, srv, store, objects, watchers, rate)
						})
						if !ok {
							return
						}
					}
				})
			}
		}
	}
}

// harnessBackend is the harness's own source (harnessSource) as a
// backend of the capacity search: the rate it holds is what a source that
// only hands each event to each reader reaches with these watchers on this
// machine, and its CPU per event at a rate is about the watchers' and
// writer's own share of a cache's.
var harnessBackend = backend{name: harnessName, new: newHarnessSource}

// capacityStep runs one step of the ladder, reports it, and tells whether
// the rate held.
func capacityStep(b *testing.B, srv *embedtest.Server, store k8sstorage.Interface, objects, watchers, rate int) bool {
	fr := fanoutRun{watchers: watchers, rate: rate, probe: capacityProbeWait}
	if dir := envString("K8SBENCH_PEER_CAPACITY_PROFILE", ""); dir != "" {
		fr.profile = filepath.Join(dir, strings.NewReplacer("/", "-", "=", "").Replace(b.Name())+".pprof")
	}
	var res fanoutResult
	for range b.N {
		res = fr.run(b, srv, store, objects, capacityStepUpdates(rate))
	}
	p50, p99 := res.all.quantile(0.5), res.all.quantile(0.99)
	held := res.lost == 0 && p99 <= capacityP99 && res.writes >= capacityPace*float64(rate)
	b.ReportMetric(float64(res.delivered)/res.elapsed.Seconds(), "events/s")
	b.ReportMetric(ms(p50), "p50-ms")
	b.ReportMetric(ms(p99), "p99-ms")
	if res.delivered > 0 {
		b.ReportMetric(float64(res.cpu.Nanoseconds())/float64(res.delivered), "cpu-ns/event")
	}
	b.ReportMetric(float64(res.terminated), "terminated")
	b.ReportMetric(float64(res.lost), "lost")
	b.ReportMetric(res.writes, "write/s")
	heldMetric := 0.0
	if held {
		heldMetric = 1
	}
	b.ReportMetric(heldMetric, "held")
	return held
}
