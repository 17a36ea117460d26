package server_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"testing"
	"time"

	"go.uber.org/goleak"
	"k8s.io/client-go/rest"

	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/apiserver/server"
)

// etcd is the etcd the package's servers store widgets in; each test runs
// its servers in a namespace of its own.
var etcd *embedtest.Server

func TestMain(m *testing.M) {
	var err error
	etcd, err = embedtest.StartServer(embedtest.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	etcd.Close()
	if code == 0 {
		if err := goleak.Find(leakOptions...); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// leakOptions are the goroutines k8s.io libraries start once per process.
var leakOptions = []goleak.Option{
	goleak.IgnoreTopFunction("k8s.io/klog/v2.(*flushDaemon).run.func1"),
	goleak.IgnoreAnyFunction("k8s.io/apimachinery/pkg/util/wait.BackoffUntilWithContext.func1"),
	// healthz.LogHealthz flushes logs with wait.Forever, started once per process.
	goleak.IgnoreTopFunction("k8s.io/apimachinery/pkg/util/wait.BackoffUntilWithContext"),
	goleak.IgnoreAnyFunction("gopkg.in/natefinch/lumberjack%2ev2.(*Logger).millRun"),
	goleak.IgnoreTopFunction("k8s.io/apimachinery/pkg/watch.(*Broadcaster).loop"),
}

// startServer runs a widget server of storage kind on the package's etcd
// until t ends, and returns a client config for it.
func startServer(t *testing.T, kind server.Storage) *rest.Config {
	t.Helper()
	cfg, stop := runServer(t, kind)
	t.Cleanup(stop)
	return cfg
}

// runServer runs a widget server and returns its client config and the
// function that stops it and waits for it to shut down.
func runServer(t *testing.T, kind server.Storage) (*rest.Config, func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s, err := server.New(server.Options{
		EtcdServers: etcd.Endpoints, Listener: ln, CertDir: t.TempDir(), Storage: kind,
	})
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	cfg := s.LoopbackConfig()
	cfg.QPS, cfg.Burst = -1, 0 // no client-side rate limit
	waitHealthy(t, cfg)
	var stopped bool
	return cfg, func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("server: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("server did not stop within 30 s")
		}
	}
}

// waitHealthy waits until the server answers /readyz.
func waitHealthy(t *testing.T, cfg *rest.Config) {
	t.Helper()
	c, err := rest.UnversionedRESTClientFor(withCodec(cfg))
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err := c.Get().AbsPath("/readyz").Do(ctx).Error()
		cancel()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("server not ready: %v", err)
		}
		time.Sleep(50 * time.Millisecond) // polling an HTTP endpoint: nothing to wait on
	}
}

func withCodec(cfg *rest.Config) *rest.Config {
	c := rest.CopyConfig(cfg)
	c.NegotiatedSerializer = server.Codecs.WithoutConversion()
	return c
}
