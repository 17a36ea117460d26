package etcd3

import (
	"context"
	"log/slog"
	"os"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
)

// etcdServer is the one embedded etcd shared by the package's tests; every
// test uses its own key prefix.
var etcdServer *embedtest.Server

func TestMain(m *testing.M) {
	os.Exit(embedtest.RunMain(m, &etcdServer, embedtest.Options{}))
}

// prefixSeq makes prefixes unique across repeated runs (-count) against
// the one etcd.
var prefixSeq atomic.Int64

// uniquePrefix returns an etcd prefix unique to this test invocation.
func uniquePrefix(t testing.TB) string {
	return embedtest.Prefix(t) + strconv.FormatInt(prefixSeq.Add(1), 10) + "/"
}

// testCtx returns a context bounded for one test.
func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// newTestStore returns a typed Widget store under a per-test prefix with
// the resource prefix "/widgets". mod adjusts the config.
func newTestStore(t testing.TB, mod ...func(*Config)) *Store {
	t.Helper()
	cfg := Config{
		Client:         etcdServer.Client,
		Codec:          widget.Codec,
		NewFunc:        widget.New,
		NewListFunc:    widget.NewList,
		Prefix:         uniquePrefix(t),
		ResourcePrefix: "/widgets",
		Logger:         slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelWarn})),
	}
	for _, m := range mod {
		m(&cfg)
	}
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func unstructuredConfig(c *Config) {
	c.Codec = widget.UnstructuredCodec
	c.NewFunc = widget.NewUnstructured
	c.NewListFunc = widget.NewUnstructuredList
}

// rawGet reads the raw etcd key-value of a store key.
func rawGet(t testing.TB, s *Store, key string) *clientv3.GetResponse {
	t.Helper()
	ek, err := s.prepareKey(key)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := etcdServer.Client.Get(testCtx(t), ek)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// rawCount counts the raw etcd keys under the store's prefix.
func rawCount(t testing.TB, s *Store) int64 {
	t.Helper()
	resp, err := etcdServer.Client.Get(testCtx(t), s.pathPrefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatal(err)
	}
	return resp.Count
}

func mustCreate(t testing.TB, s *Store, key string, obj runtime.Object) runtime.Object {
	t.Helper()
	out := s.newFunc()
	if err := s.Create(testCtx(t), key, obj, out, 0); err != nil {
		t.Fatalf("create %s: %v", key, err)
	}
	return out
}

func testWidget(name string, labels map[string]string) *widget.Widget {
	return widget.NewWidget("ns", name).WithLabels(labels)
}

func rvOf(t testing.TB, obj runtime.Object) uint64 {
	t.Helper()
	rv, err := storage.APIObjectVersioner{}.ObjectResourceVersion(obj)
	if err != nil {
		t.Fatal(err)
	}
	return rv
}

func currentRev(t testing.TB) int64 {
	t.Helper()
	resp, err := etcdServer.Client.Get(testCtx(t), "/no-such-key")
	if err != nil {
		t.Fatal(err)
	}
	return resp.Header.Revision
}
