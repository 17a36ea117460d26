package bench

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"syscall"
	"testing"
	"time"

	"github.com/listwatch/listwatch/examples/apiserver/server"
)

// processCPU returns the user plus system CPU time this process has used
// (getrusage(RUSAGE_SELF): the server, the in-process etcd and the
// in-process clients together).
func processCPU(b *testing.B) time.Duration {
	b.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatalf("getrusage: %v", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// startProfile starts a CPU profile of the process into the
// -apiserver.cpuprofile directory, named after the storage and the watcher
// count, and returns the function that stops it; without the flag it does
// nothing.
func startProfile(b *testing.B, kind server.Storage, watchers int) (stop func()) {
	b.Helper()
	if *flagProfile == "" {
		return func() {}
	}
	if err := os.MkdirAll(*flagProfile, 0o755); err != nil {
		b.Fatal(err)
	}
	f, err := os.Create(filepath.Join(*flagProfile, fmt.Sprintf("%s-%d.pprof", kind, watchers)))
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		b.Fatalf("cpu profile: %v", err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			b.Errorf("cpu profile: %v", err)
		}
	}
}
