package bench

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
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
// -apiserver.cpuprofile directory, named after the storage, the protocol,
// the watcher count and the pace, and returns the function that stops it; without the flag it does
// nothing.
func startProfile(b *testing.B, kind server.Storage, proto protocol, watchers int, pace time.Duration) (stop func()) {
	b.Helper()
	if *flagProfile == "" {
		return func() {}
	}
	if err := os.MkdirAll(*flagProfile, 0o755); err != nil {
		b.Fatal(err)
	}
	name := fmt.Sprintf("%s-%s-%d", kind, proto, watchers)
	if pace > 0 {
		name += "-pace" + pace.String()
	}
	f, err := os.Create(filepath.Join(*flagProfile, name+".pprof"))
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

// clockTick is the unit of /proc/stat's times (USER_HZ, 100 on Linux).
const clockTick = 10 * time.Millisecond

// machineCPU returns the CPU time all processes on the machine have used
// (the busy fields of /proc/stat's cpu line), or -1 where /proc/stat cannot
// be read: with processCPU it tells how much of the machine others used
// while this process was measured.
func machineCPU() time.Duration {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return -1
	}
	line, _, _ := bytes.Cut(data, []byte("\n"))
	fields := bytes.Fields(line)
	if len(fields) < 9 || string(fields[0]) != "cpu" {
		return -1
	}
	var busy int64
	// user nice system idle iowait irq softirq steal: all but idle and iowait.
	for i, f := range fields[1:9] {
		if i == 3 || i == 4 {
			continue
		}
		n, err := strconv.ParseInt(string(f), 10, 64)
		if err != nil {
			return -1
		}
		busy += n
	}
	return time.Duration(busy) * clockTick
}
