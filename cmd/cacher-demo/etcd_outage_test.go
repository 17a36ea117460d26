package main

import (
	"context"
	"io"
	"net"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestServeAgainstUnreachableEtcdSaysWhy: serve with --etcd-endpoints
// pointing at a port nothing listens on, or at one that accepts and never
// answers (a frozen etcd), exits within 10 s with a message that says etcd
// is unavailable and names the endpoint (and, when refused, the dial error).
func TestServeAgainstUnreachableEtcdSaysWhy(t *testing.T) {
	frozen, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer frozen.Close()
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	closed.Close()
	for name, tc := range map[string]struct{ addr, want string }{
		"refused": {closedAddr, "connection refused"},
		"frozen":  {frozen.Addr().String(), "etcd is unavailable"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel() // each waits out the 5 s dial timeout
			serveAgainst(t, "http://"+tc.addr, tc.want)
		})
	}
}

// serveAgainst runs serve against etcd endpoint ep, expecting it to fail
// within 10 s with a message naming ep and saying want.
func serveAgainst(t *testing.T, ep, want string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	err := run(ctx, []string{"serve", "--listen", "127.0.0.1:0", "--etcd-endpoints", ep}, io.Discard, io.Discard)
	took := time.Since(start)
	if err == nil || exitCode(err) != 1 {
		t.Fatalf("err = %v, want exit code 1", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "etcd is unavailable at "+ep) || !strings.Contains(msg, want) {
		t.Errorf("%q does not say etcd is unavailable at %s (%s)", msg, ep, want)
	}
	if took > 10*time.Second {
		t.Errorf("serve took %v to give up", took)
	}
	t.Logf("after %v: %v", took.Round(time.Millisecond), err)
}

// TestBinaryDoesNotLinkTesting: cacher-demo depends on no package that
// imports testing (embedtest, goleak and testify are for tests only).
func TestBinaryDoesNotLinkTesting(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if dep == "testing" || strings.HasSuffix(dep, "/embedtest") || strings.HasPrefix(dep, "go.uber.org/goleak") ||
			strings.HasPrefix(dep, "github.com/stretchr/testify") {
			t.Errorf("cacher-demo depends on %s", dep)
		}
	}
}
