package etcd3

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/etcdrun"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
)

// TestHealthRunDetectsFrozenEtcdWithoutTraffic: with Health.Run probing,
// an etcd that stops answering (a frozen proxy: connection up, no answer,
// as with SIGSTOP or a partition) is noticed without any request, within
// the probe interval plus the probe timeout; meanwhile reads and writes
// fail at once with ErrUnavailable (never sent: 503 with Retry-After) and
// ReadinessCheck reports it; when etcd answers again requests succeed
// within a second. The loss and the return are logged once each.
func TestHealthRunDetectsFrozenEtcdWithoutTraffic(t *testing.T) {
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
	logs := &lockedBuffer{}
	const interval, timeout = 200 * time.Millisecond, 500 * time.Millisecond
	h := NewHealth(cli, HealthConfig{ProbeInterval: interval, ProbeTimeout: timeout,
		Logger: slog.New(slog.NewTextHandler(logs, nil))})
	s, err := New(Config{Client: cli, Codec: widget.Codec, NewFunc: widget.New, NewListFunc: widget.NewList,
		Prefix: uniquePrefix(t), ResourcePrefix: "/widgets", RequestTimeout: 10 * time.Second, Health: h})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { h.Run(ctx) })
	defer wg.Wait()
	defer cancel()
	mustCreate(t, s, "/widgets/ns/a", testWidget("a", nil))

	p.Freeze()
	frozen := time.Now()
	for s.ReadinessCheck() == nil {
		if time.Since(frozen) > interval+timeout+3*time.Second {
			t.Fatalf("a frozen etcd not noticed after %v", time.Since(frozen))
		}
		time.Sleep(20 * time.Millisecond) // polling for the probe under test
	}
	t.Logf("frozen etcd noticed without traffic after %v (probe every %v, timeout %v)",
		time.Since(frozen).Round(time.Millisecond), interval, timeout)
	if !strings.Contains(logs.String(), "etcd is unavailable") {
		t.Fatalf("the loss is not logged:\n%s", logs.String())
	}
	for name, call := range outageCalls(s) {
		start := time.Now()
		err := call(context.Background())
		var se *storage.Error
		if !errors.As(err, &se) || !errors.Is(err, storage.ErrUnavailable) || se.RetryAfterSeconds == 0 {
			t.Fatalf("%s with etcd frozen and known down: %v, want ErrUnavailable with Retry-After", name, err)
		}
		if took := time.Since(start); took > time.Second {
			t.Fatalf("%s with etcd known down took %v, want at once", name, took)
		}
		if msg := se.Status().Message; strings.Contains(msg, p.Endpoint) || strings.Contains(msg, "probe") {
			t.Fatalf("%s: the client is told %q", name, msg)
		}
	}

	p.Thaw()
	requireRecovered(t, s, time.Now())
	out := logs.String()
	if n := strings.Count(out, "etcd is unavailable\""); n != 1 {
		t.Errorf("want one log line of the loss, got %d:\n%s", n, out)
	}
	if n := strings.Count(out, "etcd is available again"); n != 1 {
		t.Errorf("want one log line of the return, got %d:\n%s", n, out)
	}
}
