package etcd3

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/etcdrun"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
)

// outageTimeout is the stores' RequestTimeout in the outage tests.
const outageTimeout = 500 * time.Millisecond

// lockedBuffer collects a logger's output across goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// outageStore returns a Widget store over cli with a short RequestTimeout,
// logging into the returned buffer.
func outageStore(t *testing.T, cli *clientv3.Client) (*Store, *lockedBuffer) {
	t.Helper()
	logs := &lockedBuffer{}
	s, err := New(Config{Client: cli, Codec: widget.Codec, NewFunc: widget.New,
		NewListFunc: widget.NewList, Prefix: uniquePrefix(t), ResourcePrefix: "/widgets",
		RequestTimeout: outageTimeout, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, logs
}

// outageCalls are the store's consistent reads and a write.
func outageCalls(s *Store) map[string]func(ctx context.Context) error {
	return map[string]func(ctx context.Context) error{
		"get": func(ctx context.Context) error {
			return s.Get(ctx, "/widgets/ns/a", storage.GetOptions{}, &widget.Widget{})
		},
		"list": func(ctx context.Context) error {
			return s.GetList(ctx, "/widgets", storage.ListOptions{Recursive: true, Predicate: storage.Everything}, &widget.WidgetList{})
		},
		"create": func(ctx context.Context) error {
			return s.Create(ctx, "/widgets/ns/"+time.Now().Format("150405.000000000"), testWidget("b", nil), &widget.Widget{}, 0)
		},
		"current RV": func(ctx context.Context) error { _, err := s.GetCurrentResourceVersion(ctx); return err },
	}
}

// requireUnavailable checks that each call fails with ErrUnavailable
// naming endpoint (and want, if set) in its log text, and neither in its
// client message, within the request timeout (plus slack for -race), not
// the caller's much longer deadline. With sent, etcd took the requests
// and did not answer (frozen): the create, which may have been applied,
// fails with ErrTimeout (outcome unknown, no Retry-After) instead.
func requireUnavailable(t *testing.T, s *Store, endpoint, want string, sent bool) {
	t.Helper()
	for name, call := range outageCalls(s) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		start := time.Now()
		err := call(ctx)
		took := time.Since(start)
		cancel()
		var se *storage.Error
		if !errors.As(err, &se) {
			t.Fatalf("%s: %v (%T), want a *storage.Error", name, err, err)
		}
		if client := se.Status().Message; strings.Contains(client, endpoint) || strings.Contains(client, want) {
			t.Fatalf("%s: client message %q names the endpoint or the cause", name, client)
		}
		if sent && name == "create" {
			if !errors.Is(err, storage.ErrTimeout) || se.RetryAfterSeconds != 0 || !strings.Contains(err.Error(), "may or may not") ||
				!strings.Contains(err.Error(), endpoint) {
				t.Fatalf("create sent to a frozen etcd: %v, want ErrTimeout (outcome unknown) without Retry-After", err)
			}
			continue
		}
		if !errors.Is(err, storage.ErrUnavailable) {
			t.Fatalf("%s: %v (%T), want ErrUnavailable", name, err, err)
		}
		if msg := err.Error(); !strings.Contains(msg, "etcd is unavailable at "+endpoint) || !strings.Contains(msg, want) {
			t.Fatalf("%s: message %q does not name %s and %q", name, msg, endpoint, want)
		}
		if took > outageTimeout+2*time.Second {
			t.Fatalf("%s took %v with a %v request timeout", name, took, outageTimeout)
		}
		t.Logf("%s after %v: %v", name, took.Round(time.Millisecond), err)
	}
	if err := s.ReadinessCheck(); !errors.Is(err, storage.ErrUnavailable) {
		t.Fatalf("ReadinessCheck during the outage: %v", err)
	}
}

// requireRecovered waits (at most 2 s) until every call succeeds and
// ReadinessCheck answers nil.
func requireRecovered(t *testing.T, s *Store, back time.Time) {
	t.Helper()
	for name, call := range outageCalls(s) {
		for {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			err := call(ctx)
			cancel()
			if err == nil {
				break
			}
			if time.Since(back) > 2*time.Second {
				t.Fatalf("%s still fails %v after etcd came back: %v", name, time.Since(back), err)
			}
			time.Sleep(50 * time.Millisecond) // polling for the recovery under test
		}
	}
	if err := s.ReadinessCheck(); err != nil {
		t.Fatalf("ReadinessCheck after recovery: %v", err)
	}
	t.Logf("recovered %v after etcd came back", time.Since(back).Round(time.Millisecond))
}

// TestOutageStoppedEtcdFailsFastAndRecovers stops the etcd under a store:
// consistent get and list, create and the current RV fail within the
// request timeout with ErrUnavailable naming the endpoint and the dial
// error, later ones at once; ReadinessCheck reports it; the loss and the
// recovery are logged once each; after etcd restarts on its port every
// call succeeds within 2 s.
func TestOutageStoppedEtcdFailsFastAndRecovers(t *testing.T) {
	dir := t.TempDir()
	srv, err := embedtest.StartServer(embedtest.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { srv.Close() }()
	ep := srv.Endpoints[0]
	cli, err := etcdrun.Connect(context.Background(), etcdrun.ClientConfig{Endpoints: []string{ep}})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	s, logs := outageStore(t, cli)
	mustCreate(t, s, "/widgets/ns/a", testWidget("a", nil))
	if err := s.ReadinessCheck(); err != nil {
		t.Fatalf("ReadinessCheck with etcd up: %v", err)
	}

	srv.Close()
	requireUnavailable(t, s, ep, "connection refused", false)
	// Known down with no connection: the next call fails at once.
	start := time.Now()
	if err := s.Get(context.Background(), "/widgets/ns/a", storage.GetOptions{}, &widget.Widget{}); !errors.Is(err, storage.ErrUnavailable) {
		t.Fatalf("get: %v", err)
	} else if took := time.Since(start); took > outageTimeout/2 {
		t.Errorf("a get while etcd is known down took %v", took)
	}

	srv, err = embedtest.StartServer(embedtest.Options{Dir: dir, ClientURL: ep})
	if err != nil {
		t.Fatal(err)
	}
	requireRecovered(t, s, time.Now())
	out := logs.String()
	if n := strings.Count(out, "etcd is unavailable\""); n != 1 || !strings.Contains(out, ep) {
		t.Errorf("want one log line of the loss naming %s, got %d:\n%s", ep, n, out)
	}
	if n := strings.Count(out, "etcd is available again"); n != 1 {
		t.Errorf("want one log line of the recovery, got %d:\n%s", n, out)
	}
}

// TestOutageFrozenEtcdFailsFastAndRecovers puts a frozen proxy (bytes
// accepted, never answered, as with a SIGSTOPped etcd) between the store
// and the package's etcd: calls fail within the request timeout with
// ErrUnavailable naming the proxy's endpoint, ReadinessCheck reports it,
// and after Thaw every call succeeds within 2 s.
func TestOutageFrozenEtcdFailsFastAndRecovers(t *testing.T) {
	p, err := embedtest.StartProxy(etcdServer.Endpoints[0])
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	cli, err := etcdrun.Connect(context.Background(), etcdrun.ClientConfig{Endpoints: []string{p.Endpoint}})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	s, _ := outageStore(t, cli)
	mustCreate(t, s, "/widgets/ns/a", testWidget("a", nil))

	p.Freeze()
	requireUnavailable(t, s, p.Endpoint, "no answer within "+outageTimeout.String(), true)
	p.Thaw()
	requireRecovered(t, s, time.Now())
}

// TestReadinessCheckProbesIdleStore: a store that made no request since
// etcd stopped still reports the outage, within the probe's bound.
func TestReadinessCheckProbesIdleStore(t *testing.T) {
	srv, err := embedtest.StartServer(embedtest.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	cli, err := etcdrun.Connect(context.Background(), etcdrun.ClientConfig{Endpoints: srv.Endpoints})
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	s, _ := outageStore(t, cli)
	if err := s.ReadinessCheck(); err != nil {
		t.Fatalf("ReadinessCheck with etcd up: %v", err)
	}
	srv.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		start := time.Now()
		err := s.ReadinessCheck()
		if took := time.Since(start); took > readinessProbeTimeout+time.Second {
			t.Fatalf("ReadinessCheck took %v", took)
		}
		if errors.Is(err, storage.ErrUnavailable) && strings.Contains(err.Error(), srv.Endpoints[0]) {
			t.Logf("ReadinessCheck: %v", err)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("ReadinessCheck still %v after etcd stopped", err)
		}
		time.Sleep(100 * time.Millisecond) // the last answer stands for up to a second
	}
}
