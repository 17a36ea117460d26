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
// closing as the next row opens its own): its watchers' connections, with
// ends of them in this process (2: clients and server; 1: either), one
// connection per watch over HTTP/1.1, one per 100 watches over HTTP/2. It says on stderr when it raised the
// limit, and when it could not raise it enough (the run then shows the
// watchers it could not open as refused).
func raiseFileLimit(b *testing.B, counts []int, protos []protocol, ends int) {
	b.Helper()
	if len(counts) == 0 || len(protos) == 0 {
		return
	}
	w := slices.Max(counts)
	conns := (w + 99) / 100
	if slices.Contains(protos, protoH1) {
		conns = w
	}
	// need is what one row takes; ask leaves room for the previous one's.
	need, ask := uint64(ends*conns+fileMargin), uint64(2*ends*conns+fileMargin)
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		b.Fatalf("getrlimit: %v", err)
	}
	if lim.Cur >= ask {
		return
	}
	old := lim
	want := syscall.Rlimit{Cur: ask, Max: max(lim.Max, ask)}
	err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &want)
	if err != nil {
		// Raising the hard limit needs privilege (CAP_SYS_RESOURCE); the
		// soft one can go up to it.
		want = syscall.Rlimit{Cur: lim.Max, Max: lim.Max}
		if want.Cur > old.Cur {
			if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &want); err != nil {
				b.Fatalf("setrlimit: %v", err)
			}
		}
	}
	switch {
	case want.Cur < need:
		fmt.Fprintf(os.Stderr, "bench: RLIMIT_NOFILE %d/%d (was %d/%d), short of the %d asked for %d watchers (%d connections, %d end(s) of each in this process, plus %d; raising the hard limit: %v); watchers may be refused\n",
			want.Cur, want.Max, old.Cur, old.Max, need, w, conns, ends, fileMargin, err)
	case want.Cur != old.Cur || want.Max != old.Max:
		fmt.Fprintf(os.Stderr, "bench: RLIMIT_NOFILE raised from %d/%d to %d/%d for %d watchers (%d connections, %d end(s) of each in this process)\n",
			old.Cur, old.Max, want.Cur, want.Max, w, conns, ends)
	}
}
