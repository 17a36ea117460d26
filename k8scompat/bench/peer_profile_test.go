package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sync"
	"testing"
)

// profiledWatchers is the watcher count of the unpaced fan-out whose CPU
// profile BenchmarkPeerFanout writes (for both caches, so that profiling
// costs each the same).
const profiledWatchers = 1000

// peerProfileDir is the directory the fan-out CPU profiles go to:
// K8SBENCH_PEER_CPUPROFILE, or else a new temporary directory (left in
// place: cmd/benchtable reads the profiles after the benchmarks exit).
var peerProfileDir = sync.OnceValues(func() (string, error) {
	if dir := os.Getenv("K8SBENCH_PEER_CPUPROFILE"); dir != "" {
		return dir, os.MkdirAll(dir, 0o755)
	}
	return os.MkdirTemp("", "bench-peer-cpu-")
})

// fanoutProfilePath is where run's profile of backend goes, or "" (with the
// reason logged) when there is no directory for it.
func fanoutProfilePath(b *testing.B, backend string, watchers, run int) string {
	dir, err := peerProfileDir()
	if err != nil {
		b.Logf("no CPU profile of the fan-out: %v", err)
		return ""
	}
	return filepath.Join(dir, fmt.Sprintf("fanout-w%d-%s-run%d.pprof", watchers, backend, run))
}

// startCPUProfile starts the process's CPU profile into path and returns
// the function that stops it and reports whether the file is complete. A
// profile that cannot start (another one running, as with -cpuprofile) is
// logged and skipped.
func startCPUProfile(b *testing.B, path string) func() bool {
	f, err := os.Create(path)
	if err != nil {
		b.Logf("no CPU profile of the fan-out: %v", err)
		return func() bool { return false }
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Logf("no CPU profile of the fan-out: %v", err)
		f.Close()
		os.Remove(path)
		return func() bool { return false }
	}
	return func() bool {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			b.Logf("CPU profile %s: %v", path, err)
			return false
		}
		return true
	}
}

// profiles collects the profiles written, by backend, for the lines that
// point cmd/benchtable at them.
type profiles struct {
	mu    sync.Mutex
	paths map[string][]string
}

func (p *profiles) add(backend, path string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.paths == nil {
		p.paths = map[string][]string{}
	}
	p.paths[backend] = append(p.paths[backend], path)
}

// print writes one configuration line per profile,
// "peer-cpuprofile-<backend>: <path>".
func (p *profiles) print() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, be := range peerBackends() {
		for _, path := range p.paths[be.name] {
			fmt.Printf("peer-cpuprofile-%s: %s\n", be.name, path)
		}
	}
}
