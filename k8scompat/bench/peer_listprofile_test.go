package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strings"
	"syscall"
	"testing"
)

// listProfilePath is where the CPU profile of one PeerList measurement
// goes: a file in K8SBENCH_PEER_LISTPROFILE, or "" (no profile) when that
// is unset or cannot be created.
func listProfilePath(b *testing.B, name string) string {
	dir := os.Getenv("K8SBENCH_PEER_LISTPROFILE")
	if dir == "" {
		return ""
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.Logf("no CPU profile of the list: %v", err)
		return ""
	}
	return filepath.Join(dir, strings.NewReplacer("/", "-", "=", "").Replace(name)+".pprof")
}

// writeHeapProfile writes the heap profile (after a GC) to path, so that
// what the GC must mark while the lists run can be read from it.
func writeHeapProfile(b *testing.B, path string) {
	runtime.GC()
	f, err := os.Create(path)
	if err != nil {
		b.Logf("no heap profile: %v", err)
		return
	}
	defer f.Close()
	if err := pprof.WriteHeapProfile(f); err != nil {
		b.Logf("heap profile %s: %v", path, err)
	}
}

// gcSample reads the runtime's count of completed GC cycles and its
// estimate of the CPU time spent in GC, of which in assists, in seconds.
type gcSample struct {
	cycles         uint64
	gcCPU, assists float64
}

var gcMetrics = []string{"/gc/cycles/total:gc-cycles", "/cpu/classes/gc/total:cpu-seconds", "/cpu/classes/gc/mark/assist:cpu-seconds"}

func readGC() gcSample {
	s := make([]metrics.Sample, len(gcMetrics))
	for i, n := range gcMetrics {
		s[i].Name = n
	}
	metrics.Read(s)
	return gcSample{cycles: s[0].Value.Uint64(), gcCPU: s[1].Value.Float64(), assists: s[2].Value.Float64()}
}

// report adds the GC's share of a measurement of lists lists that began at
// s: completed GC cycles per list and the runtime's estimate of GC CPU
// (and of assists, the part charged to allocating goroutines such as a
// list's) per list, in ms.
func (s gcSample) report(b *testing.B, lists int) {
	end := readGC()
	n := float64(lists)
	b.ReportMetric(float64(end.cycles-s.cycles)/n, "gc/list")
	b.ReportMetric((end.gcCPU-s.gcCPU)*1e3/n, "gc-cpu-ms/list")
	b.ReportMetric((end.assists-s.assists)*1e3/n, "assist-ms/list")
}

// gcDuring reports whether a GC cycle completed between s and now.
func (s gcSample) gcDuring() bool { return readGC().cycles != s.cycles }

// listTimes formats per-list times, a '*' marking lists during which a GC
// cycle completed, for b.Logf.
func listTimes(times []float64, gc []bool) string {
	var sb strings.Builder
	for i, t := range times {
		mark := ""
		if gc[i] {
			mark = "*"
		}
		fmt.Fprintf(&sb, " %.2f%s", t, mark)
	}
	return sb.String()
}

// minorFaults is the process's count of minor page faults so far: each is
// a page the kernel zeroed and mapped on first touch, as for a list's
// items in memory the Go runtime had returned to it.
func minorFaults() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Minflt
}
