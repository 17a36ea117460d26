package bench

import (
	"fmt"
	"os"
	"slices"
	"syscall"
	"testing"
)

// fileMargin is the descriptors kept for everything but the watchers'
// connections (etcd, the writer, the listener, log files).
const fileMargin = 4096

// raiseFileLimit raises this process's RLIMIT_NOFILE so that the largest
// fan-out run fits twice (the previous row's connections may still be
// closing as the next row opens its own): its watchers' connections have
// both ends in this process (clients and server), one connection per
// watch over HTTP/1.1, one per 100 watches over HTTP/2. It says on stderr when it raised the
// limit, and when it could not raise it enough (the run then shows the
// watchers it could not open as refused).
func raiseFileLimit(b *testing.B, counts []int, protos []protocol) {
	b.Helper()
	if len(counts) == 0 || len(protos) == 0 {
		return
	}
	w := slices.Max(counts)
	conns := (w + 99) / 100
	if slices.Contains(protos, protoH1) {
		conns = w
	}
	need := uint64(2*2*conns + fileMargin)
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		b.Fatalf("getrlimit: %v", err)
	}
	if lim.Cur >= need {
		return
	}
	old := lim
	want := syscall.Rlimit{Cur: need, Max: max(lim.Max, need)}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &want); err != nil {
		// Raising the hard limit needs privilege; the soft one can go up to it.
		want = syscall.Rlimit{Cur: lim.Max, Max: lim.Max}
		if err2 := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &want); err2 != nil {
			b.Fatalf("setrlimit: %v", err2)
		}
		fmt.Fprintf(os.Stderr, "bench: RLIMIT_NOFILE raised from %d/%d to %d/%d, short of the %d that %d watchers need (%v); watchers may be refused\n",
			old.Cur, old.Max, want.Cur, want.Max, need, w, err)
		return
	}
	fmt.Fprintf(os.Stderr, "bench: RLIMIT_NOFILE raised from %d/%d to %d/%d for %d watchers (%d connections, both ends in this process)\n",
		old.Cur, old.Max, want.Cur, want.Max, w, conns)
}
