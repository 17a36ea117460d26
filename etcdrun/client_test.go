package etcdrun

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/listwatch/listwatch/storage"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// closedEndpoint returns the URL of a loopback port nothing listens on.
func closedEndpoint(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

// TestConnectUnreachableFailsFastNamingEndpoint: Connect to a port nothing
// listens on fails within its DialTimeout with an ErrUnavailable error that
// names the endpoint and the dial error.
func TestConnectUnreachableFailsFastNamingEndpoint(t *testing.T) {
	ep := closedEndpoint(t)
	start := time.Now()
	cli, err := Connect(context.Background(), ClientConfig{Endpoints: []string{ep}, DialTimeout: 500 * time.Millisecond})
	took := time.Since(start)
	if err == nil {
		cli.Close()
		t.Fatal("Connect to a closed port succeeded")
	}
	if !errors.Is(err, storage.ErrUnavailable) {
		t.Fatalf("error %v (%T) is not ErrUnavailable", err, err)
	}
	msg := err.Error()
	for _, want := range []string{"etcd is unavailable", strings.TrimPrefix(ep, "http://"), "connection refused"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not say %q", msg, want)
		}
	}
	if took > 2*time.Second {
		t.Errorf("Connect took %v with a 500ms DialTimeout", took)
	}
	t.Logf("after %v: %v", took.Round(time.Millisecond), err)
}

// TestStartServerConnectPing starts an embedded member in a temporary
// directory on kernel-chosen ports, connects to it and pings it; after
// Close the same client's Ping fails with ErrUnavailable, bounded by its
// context, and the directory is gone.
func TestStartServerConnectPing(t *testing.T) {
	srv, err := StartServer(ServerConfig{NoFsync: true,
		ClientURLs: []string{"http://127.0.0.1:0"}, PeerURLs: []string{"http://127.0.0.1:0"}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cli, err := Connect(ctx, ClientConfig{Endpoints: srv.Endpoints})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	if err := Ping(ctx, cli); err != nil {
		t.Fatalf("Ping of a running member: %v", err)
	}
	srv.Close()
	pctx, pcancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer pcancel()
	start := time.Now()
	err = Ping(pctx, cli)
	if !errors.Is(err, storage.ErrUnavailable) || !strings.Contains(err.Error(), srv.Endpoints[0]) {
		t.Fatalf("Ping of a stopped member: %v", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Fatalf("Ping took %v", took)
	}
	t.Logf("stopped member: %v", err)
	if _, err := os.Stat(srv.Dir); !os.IsNotExist(err) {
		t.Fatalf("temporary data directory %s after Close: %v", srv.Dir, err)
	}
}

func TestServerConfigRejectsBadInput(t *testing.T) {
	for name, c := range map[string]ServerConfig{
		"no dir":     {},
		"bad client": {Dir: t.TempDir(), ClientURLs: []string{"127.0.0.1:2379"}},
		"bad peer":   {Dir: t.TempDir(), PeerURLs: []string{"ftp://x:1"}},
	} {
		if _, err := c.EmbedConfig(); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if _, err := NewClient(ClientConfig{}); err == nil {
		t.Error("NewClient without endpoints: no error")
	}
}
