package bench

import (
	"fmt"
	"os"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/fields"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
)

// fanoutE is the number of updates of FANOUT, FANOUT-SEL and SLOW.
const fanoutE = 2000

func everything(int) storage.SelectionPredicate {
	return storage.SelectionPredicate{GetAttrs: widget.GetAttrs}
}

// BenchmarkFanout is FANOUT: W watchers of everything, E updates.
func BenchmarkFanout(b *testing.B) {
	f := getFixture(b)
	for _, w := range []int{10, 100, 1000} {
		for _, src := range f.sources() {
			e := fanoutE
			if src.name == "etcd" && w >= 1000 && !full() {
				// 1,000 etcd watches decode every event each: 2M decodes
				// take minutes on 2 cores. LISTWATCH_BENCH_FULL=1 runs E=2,000.
				e = fanoutE / 10
			}
			b.Run(fmt.Sprintf("N=%d/W=%d/E=%d/source=%s", f.n, w, e, src.name), func(b *testing.B) {
				p := watchPlan{W: w, E: e, Objects: f.n, Pred: everything,
					Want: func(int) int { return e }}
				reportFanout(b, f, src, p)
			})
		}
	}
}

// BenchmarkFanoutSelector is FANOUT-SEL: 1,000 watchers, each on its own
// object by metadata.name, E updates spread over those objects. On the etcd
// source each watcher watches its object's key (a recursive watch of the
// resource with the selector would decode every event 1,000 times: about
// 4 minutes on 2 cores); on the cache it watches the resource with the field
// selector, as an API client does.
func BenchmarkFanoutSelector(b *testing.B) {
	f := getFixture(b)
	const w = 1000
	objects := min(w, f.n)
	for _, src := range f.sources() {
		b.Run(fmt.Sprintf("N=%d/W=%d/E=%d/source=%s", f.n, w, fanoutE, src.name), func(b *testing.B) {
			p := watchPlan{W: objects, E: fanoutE, Objects: objects,
				Key: func(i int) (string, bool) {
					if src.name == "etcd" {
						return resourcePrefix + "/" + Namespace + "/" + Name(i), false
					}
					return resourcePrefix, true
				},
				Pred: func(i int) storage.SelectionPredicate {
					return storage.SelectionPredicate{GetAttrs: widget.GetAttrs,
						Field: fields.OneTermEqualSelector("metadata.name", Name(i))}
				},
				Want: func(i int) int { return fanoutE/objects + btoi(i < fanoutE%objects) }}
			reportFanout(b, f, src, p)
		})
	}
}

// full reports whether LISTWATCH_BENCH_FULL=1 asks for the full workload
// where the default trims it to keep `make bench` short.
func full() bool { return os.Getenv("LISTWATCH_BENCH_FULL") == "1" }

func btoi(v bool) int {
	if v {
		return 1
	}
	return 0
}

func reportFanout(b *testing.B, f *fixture, src source, p watchPlan) {
	var res watchResult
	b.ReportAllocs()
	for b.Loop() {
		res = runWatchPlan(b, f, src, p)
	}
	b.ReportMetric(float64(res.delivered)/res.elapsed.Seconds(), "events/s")
	b.ReportMetric(Ms(Percentile(res.fast.latencies, 50)), "p50-ms")
	b.ReportMetric(Ms(Percentile(res.fast.latencies, 99)), "p99-ms")
	b.ReportMetric(float64(res.watches), "etcd-watches")
	b.ReportMetric(float64(res.fast.ended), "ended")
}

// BenchmarkSlow is SLOW: 100 watchers, 10 of them sleep 5 ms per event.
func BenchmarkSlow(b *testing.B) {
	f := getFixture(b)
	for _, src := range f.sources() {
		b.Run(fmt.Sprintf("N=%d/W=100/slow=10/E=%d/source=%s", f.n, fanoutE, src.name), func(b *testing.B) {
			p := watchPlan{W: 100, E: fanoutE, Objects: f.n, Pred: everything,
				Want:      func(int) int { return fanoutE },
				Slow:      func(i int) bool { return i < 10 },
				SlowDelay: 5 * time.Millisecond}
			var res watchResult
			for b.Loop() {
				res = runWatchPlan(b, f, src, p)
			}
			b.ReportMetric(float64(res.fast.ended), "fast-ended")
			b.ReportMetric(float64(res.slow.ended), "slow-ended")
			b.ReportMetric(Ms(Percentile(res.fast.latencies, 99)), "fast-p99-ms")
			b.ReportMetric(res.fast.done.Seconds(), "fast-s")
			b.ReportMetric(res.slow.done.Seconds(), "slow-s")
		})
	}
}
