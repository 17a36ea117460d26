package cacher_test

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/storage/etcd3"
)

// etcd is the embedded etcd shared by the package's tests; each test uses
// its own key prefix.
var etcd *embedtest.Server

func TestMain(m *testing.M) {
	os.Exit(embedtest.RunMain(m, &etcd, embedtest.Options{}))
}

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// newStore returns an etcd3 Widget store on prefix (the etcd path prefix).
func newStore(t testing.TB, prefix string, unstructured bool) *etcd3.Store {
	t.Helper()
	// Start empty even when the test runs again (-count > 1) on this etcd.
	if _, err := etcd.Client.Delete(testCtx(t), prefix, clientv3.WithPrefix()); err != nil {
		t.Fatal(err)
	}
	cfg := etcd3.Config{Client: etcd.Client, Codec: widget.Codec, NewFunc: widget.New,
		NewListFunc: widget.NewList, Prefix: prefix, ResourcePrefix: "/widgets"}
	if unstructured {
		cfg.Codec = widget.UnstructuredCodec
		cfg.NewFunc, cfg.NewListFunc = widget.NewUnstructured, widget.NewUnstructuredList
	}
	s, err := etcd3.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// startCacher builds a cacher over store, runs it until the test ends and
// waits until it is ready.
func startCacher(t testing.TB, store storage.Interface, mod ...func(*cacher.Config)) *cacher.Cacher {
	t.Helper()
	cfg := cacher.Config{Storage: store, ResourcePrefix: "/widgets", NewFunc: widget.New,
		NewListFunc: widget.NewList, GetAttrs: widget.GetAttrs,
		IndexLabels: []string{"app"}, IndexFields: []string{"spec.nodeName"},
		Logger: slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn}))}
	for _, m := range mod {
		m(&cfg)
	}
	c, err := cacher.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	stop := runCacher(t, c)
	t.Cleanup(stop)
	if err := c.WaitReady(testCtx(t)); err != nil {
		t.Fatalf("WaitReady: %v", err)
	}
	return c
}

// runCacher runs c in a goroutine; the returned func stops it and waits.
func runCacher(t testing.TB, c *cacher.Cacher) func() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	var once atomic.Bool
	return func() {
		if once.Swap(true) {
			return
		}
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("Run did not return after cancel")
		}
	}
}

func etcdPrefix(t testing.TB) string { return strings.TrimSuffix(embedtest.Prefix(t), "/") }
