package cacher_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/etcdrun"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/storage/etcd3"
)

// outageRequestTimeout is the stores' RequestTimeout in the outage tests.
const outageRequestTimeout = 500 * time.Millisecond

// proxiedEtcd puts a Proxy in front of the package's etcd (which stays up)
// and returns it with a client of it built as serve builds one; killing
// the proxy is, to the client, etcd's process dying.
func proxiedEtcd(t *testing.T) (*embedtest.Proxy, *clientv3.Client) {
	t.Helper()
	p, err := embedtest.StartProxy(etcd.Endpoints[0])
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	cli, err := etcdrun.Connect(context.Background(), etcdrun.ClientConfig{Endpoints: []string{p.Endpoint}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return p, cli
}

func outageStore(t *testing.T, cli *clientv3.Client) *etcd3.Store {
	t.Helper()
	s, err := etcd3.New(etcd3.Config{Client: cli, Codec: widget.Codec, NewFunc: widget.New,
		NewListFunc: widget.NewList, Prefix: embedtest.Prefix(t), ResourcePrefix: "/widgets",
		RequestTimeout: outageRequestTimeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func listRV(ctx context.Context, c *cacher.Cacher, rv storage.RV) (*widget.WidgetList, error) {
	l := &widget.WidgetList{}
	err := c.GetList(ctx, "/widgets", storage.ListOptions{ResourceVersion: rv, Recursive: true, Predicate: storage.Everything}, l)
	return l, err
}

// TestCacherDuringEtcdOutage kills the etcd under a ready cacher: a
// consistent list, a consistent get and a create fail within the store's
// request timeout with ErrUnavailable naming the endpoint; RV "0" lists
// and gets, and lists not older than an RV the cache holds, are still
// served from memory, and the cacher stays ready (the store's
// ReadinessCheck reports the outage); after etcd is back, a consistent
// list succeeds within 2 s.
func TestCacherDuringEtcdOutage(t *testing.T) {
	p, cli := proxiedEtcd(t)
	ep := p.Endpoint
	store := outageStore(t, cli)
	c := startCacher(t, store)
	create(t, c, "ns", "a", nil)
	rv := create(t, c, "ns", "b", nil)
	ctx := testCtx(t)
	// The cache holds both objects before etcd goes away (a list not older
	// than rv waits for the cache to reach it).
	if l, err := listRV(ctx, c, storage.RVAt(rv)); err != nil || len(l.Items) != 2 {
		t.Fatalf("list at RV %d before the outage: %v", rv, err)
	}
	p.Kill()
	// The create comes last, once the reads have found etcd gone: it then
	// fails before it is sent (503, a retry is safe). A create sent into
	// a connection that dies with etcd may have been applied: 504 (see
	// storage/etcd3's outage tests).
	calls := []struct {
		name string
		call func() error
	}{
		{"consistent list", func() error { _, err := listRV(ctx, c, storage.RV{}); return err }},
		{"consistent get", func() error {
			return c.Get(ctx, "/widgets/ns/a", storage.GetOptions{}, &widget.Widget{})
		}},
		{"create", func() error {
			return c.Create(ctx, "/widgets/ns/c", widget.NewWidget("ns", "c"), &widget.Widget{}, 0)
		}},
	}
	for _, tc := range calls {
		name, call := tc.name, tc.call
		start := time.Now()
		err := call()
		took := time.Since(start)
		if !errors.Is(err, storage.ErrUnavailable) || !strings.Contains(err.Error(), "etcd is unavailable at "+ep) {
			t.Fatalf("%s during the outage: %v", name, err)
		}
		if took > outageRequestTimeout+2*time.Second {
			t.Fatalf("%s took %v", name, took)
		}
		t.Logf("%s after %v: %v", name, took.Round(time.Millisecond), err)
	}
	l, err := listRV(ctx, c, storage.RVAny)
	if err != nil || len(l.Items) != 2 {
		t.Fatalf("RV 0 list during the outage: %v, %d items", err, len(l.Items))
	}
	if err := c.Get(ctx, "/widgets/ns/b", storage.GetOptions{ResourceVersion: storage.RVAny}, &widget.Widget{}); err != nil {
		t.Fatalf("RV 0 get during the outage: %v", err)
	}
	l, err = listRV(ctx, c, storage.RVAt(rv))
	if err != nil || len(l.Items) != 2 {
		t.Fatalf("NotOlderThan list at RV %d during the outage: %v", rv, err)
	}
	if err := c.ReadinessCheck(); err != nil {
		t.Fatalf("cacher ReadinessCheck with a ready cache: %v", err)
	}
	if err := store.ReadinessCheck(); !errors.Is(err, storage.ErrUnavailable) {
		t.Fatalf("store ReadinessCheck during the outage: %v", err)
	}

	if err := p.Revive(); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	for {
		lctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		l, err := listRV(lctx, c, storage.RV{})
		cancel()
		if err == nil {
			if len(l.Items) != 2 {
				t.Fatalf("consistent list after recovery: %d items", len(l.Items))
			}
			break
		}
		if time.Since(back) > 2*time.Second {
			t.Fatalf("consistent list still fails %v after etcd came back: %v", time.Since(back), err)
		}
		time.Sleep(50 * time.Millisecond) // polling for the recovery under test
	}
	t.Logf("consistent list answered %v after etcd came back", time.Since(back).Round(time.Millisecond))
}

// TestCacherStartAgainstUnreachableEtcd: a cacher whose etcd is gone
// before its first list does not become ready; WaitReady and reads fail
// well within 10 s with ErrUnavailable naming the endpoint and the dial
// error, not a bare "not initialized yet: context deadline exceeded".
func TestCacherStartAgainstUnreachableEtcd(t *testing.T) {
	p, cli := proxiedEtcd(t)
	ep := p.Endpoint
	store := outageStore(t, cli)
	p.Kill()
	c, err := cacher.New(cacher.Config{Storage: store, ResourcePrefix: "/widgets", NewFunc: widget.New,
		NewListFunc: widget.NewList, ReadyWaitTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(runCacher(t, c))
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err = c.WaitReady(ctx)
	if !errors.Is(err, storage.ErrUnavailable) || !strings.Contains(err.Error(), ep) ||
		!strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("WaitReady against a stopped etcd: %v", err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("WaitReady took %v", took)
	}
	t.Logf("WaitReady: %v", err)
	if _, err := listRV(context.Background(), c, storage.RVAny); !errors.Is(err, storage.ErrUnavailable) {
		t.Fatalf("RV 0 list of an uninitialised cache against a stopped etcd: %v", err)
	}
	if err := c.ReadinessCheck(); !errors.Is(err, storage.ErrUnavailable) {
		t.Fatalf("ReadinessCheck: %v", err)
	}
}

// TestOutageLoggedOnDefaultLogger: a store and a cacher configured without
// a Logger log on slog.Default(): the cacher's list, then the loss of etcd
// and its return, once each however many requests fail meanwhile.
func TestOutageLoggedOnDefaultLogger(t *testing.T) {
	logs := &syncLog{}
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(logs, nil)))
	defer slog.SetDefault(prev)

	p, cli := proxiedEtcd(t)
	store, err := etcd3.New(etcd3.Config{Client: cli, Codec: widget.Codec, NewFunc: widget.New,
		NewListFunc: widget.NewList, Prefix: embedtest.Prefix(t), ResourcePrefix: "/widgets",
		RequestTimeout: outageRequestTimeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	c, err := cacher.New(cacher.Config{Storage: store, ResourcePrefix: "/widgets", NewFunc: widget.New,
		NewListFunc: widget.NewList})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(runCacher(t, c))
	if err := c.WaitReady(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	p.Kill()
	for range 5 {
		if _, err := listRV(testCtx(t), c, storage.RV{}); !errors.Is(err, storage.ErrUnavailable) {
			t.Fatalf("consistent list during the outage: %v", err)
		}
	}
	if err := p.Revive(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := listRV(testCtx(t), c, storage.RV{}); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("consistent list does not recover")
		}
		time.Sleep(50 * time.Millisecond) // polling for the recovery
	}
	out := logs.String()
	for line, want := range map[string]int{"cacher: listed": 1, "etcd is unavailable\"": 1, "etcd is available again": 1} {
		if n := strings.Count(out, line); n != want {
			t.Errorf("%q logged %d times, want %d:\n%s", line, n, want, out)
		}
	}
	if !strings.Contains(out, p.Endpoint) {
		t.Errorf("the logs do not name the endpoint %s:\n%s", p.Endpoint, out)
	}
}

// syncLog is a log sink read while others write to it.
type syncLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncLog) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncLog) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
