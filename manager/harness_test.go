package manager_test

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/url"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	lwclient "github.com/listwatch/listwatch/client"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/manager"
	"github.com/listwatch/listwatch/reflector/controller"
	"github.com/listwatch/listwatch/storage/etcd3"
)

// interval is one Reconcile: which manager ran it, and when.
type interval struct {
	who        string
	start, end time.Time
}

// recorder records the Reconciles of several managers.
type recorder struct {
	mu  sync.Mutex
	ivs []interval
}

// reconciler returns who's Reconciler: it works for work (returning early
// when ctx ends), records the interval and asks to run again soon, so the
// leader reconciles continuously.
func (r *recorder) reconciler(who string, work time.Duration) controller.Reconciler {
	return controller.ReconcileFunc(func(ctx context.Context, _ controller.Request) (controller.Result, error) {
		start := time.Now()
		t := time.NewTimer(work)
		select {
		case <-ctx.Done():
		case <-t.C:
		}
		t.Stop()
		r.mu.Lock()
		r.ivs = append(r.ivs, interval{who, start, time.Now()})
		r.mu.Unlock()
		return controller.Result{RequeueAfter: 5 * time.Millisecond}, nil
	})
}

// count returns how many Reconciles who has finished.
func (r *recorder) count(who string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, iv := range r.ivs {
		if iv.who == who {
			n++
		}
	}
	return n
}

// first and last return the earliest start and the latest end of who's
// Reconciles.
func (r *recorder) span(who string) (first, last time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, iv := range r.ivs {
		if iv.who != who {
			continue
		}
		if first.IsZero() || iv.start.Before(first) {
			first = iv.start
		}
		if iv.end.After(last) {
			last = iv.end
		}
	}
	return first, last
}

// requireNoOverlap fails if Reconciles of two managers overlapped in time.
func (r *recorder) requireNoOverlap(t *testing.T) {
	t.Helper()
	r.mu.Lock()
	ivs := append([]interval(nil), r.ivs...)
	r.mu.Unlock()
	sort.Slice(ivs, func(i, j int) bool { return ivs[i].start.Before(ivs[j].start) })
	for i := 1; i < len(ivs); i++ {
		prev, cur := ivs[i-1], ivs[i]
		if prev.who != cur.who && cur.start.Before(prev.end) {
			t.Fatalf("reconciles overlap: %s ran %v-%v, %s started at %v", prev.who, prev.start.Format(time.StampMicro),
				prev.end.Format(time.StampMicro), cur.who, cur.start.Format(time.StampMicro))
		}
	}
}

// replica is one manager with its own etcd client, store, informer and
// controller, as a separate process would have.
type replica struct {
	name   string
	m      *manager.Manager
	client *clientv3.Client
	cancel context.CancelFunc
	done   chan error    // Run's result
	logs   *lockedBuffer // its manager's and controller's JSON log lines
}

// leaderElection returns the election options of the tests: a lease of
// 2 s (etcd's minimum with the default heartbeat), renewed every 200 ms
// and abandoned 1 s after the last renewal was sent.
func leaderElection(client *clientv3.Client, key string) *manager.LeaderElection {
	return &manager.LeaderElection{Client: client, Key: key, LeaseDuration: 2 * time.Second,
		RenewDeadline: time.Second, RetryPeriod: 200 * time.Millisecond}
}

// newClient returns an etcd client on endpoint, closed at cleanup.
func newClient(t *testing.T, endpoint string) *clientv3.Client {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// newReplica builds a manager named name over client whose one controller
// reconciles the Widgets under prefix into rec; le may be nil.
func newReplica(t *testing.T, name string, client *clientv3.Client, prefix string, rec *recorder, le *manager.LeaderElection) *replica {
	t.Helper()
	return newReplicaWith(t, name, client, prefix, rec, manager.Options{Name: "widgets", LeaderElection: le})
}

// newReplicaWith is newReplica with the manager's options.
func newReplicaWith(t *testing.T, name string, client *clientv3.Client, prefix string, rec *recorder, opts manager.Options) *replica {
	t.Helper()
	if opts.LeaderElection != nil {
		opts.LeaderElection.Identity = name
	}
	logs := &lockedBuffer{}
	log := slog.New(slog.NewJSONHandler(io.MultiWriter(t.Output(), logs), &slog.HandlerOptions{Level: slog.LevelInfo})).With("replica", name)
	opts.Logger = log
	opts.Etcd, opts.EtcdPrefix = client, prefix
	opts.Kinds, _ = lwclient.NewKinds(widget.Scheme)
	m, err := manager.New(opts)
	require.NoError(t, err)
	inf, err := m.GetCache().InformerFor(&widget.Widget{})
	require.NoError(t, err)
	c, err := controller.New(controller.Options{Name: "widget", Reconciler: rec.reconciler(name, 2*time.Millisecond),
		CacheSyncTimeout: 10 * time.Second, Logger: log})
	require.NoError(t, err)
	require.NoError(t, c.Watch(controller.Kind[lwclient.Object](inf, nil)))
	require.NoError(t, m.Add(c))
	return &replica{name: name, m: m, client: client, logs: logs}
}

// start runs the replica's manager in the background; stop (at cleanup
// too) cancels it and waits for Run to return.
func (r *replica) start(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	r.cancel, r.done = cancel, make(chan error, 1)
	go func() { r.done <- r.m.Run(ctx) }()
	t.Cleanup(func() { r.stop(t) })
}

// stop cancels the manager and returns Run's result.
func (r *replica) stop(t *testing.T) error {
	r.cancel()
	select {
	case err, ok := <-r.done:
		if ok {
			close(r.done)
		}
		return err
	case <-time.After(20 * time.Second):
		t.Fatalf("%s: Run did not return 20s after its ctx was cancelled", r.name)
		return nil
	}
}

// waitElected waits up to d for r to lead and returns how long it took.
func (r *replica) waitElected(t *testing.T, d time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	select {
	case <-r.m.Elected():
		return time.Since(start)
	case <-time.After(d):
		t.Fatalf("%s not elected within %v", r.name, d)
		return 0
	}
}

// createWidget stores one Widget under prefix for the controllers to
// reconcile.
func createWidget(t *testing.T, prefix, name string) {
	t.Helper()
	store, err := etcd3.New(etcd3.Config{Client: etcd.Client, Codec: widget.Codec, NewFunc: widget.New,
		NewListFunc: widget.NewList, Prefix: prefix, ResourcePrefix: widget.KeyRoot})
	require.NoError(t, err)
	defer store.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, store.Create(ctx, widget.Key("default", name), widget.NewWidget("default", name), nil, 0))
}

// testPrefix returns a fresh etcd prefix for t.
func testPrefix(t *testing.T) string {
	return "/" + strings.ReplaceAll(t.Name(), "/", "_") + "-" + time.Now().Format("150405.000000")
}

// proxy forwards TCP connections to an etcd and can drop every byte in
// both directions (a network partition) without closing the connections.
type proxy struct {
	ln        net.Listener
	target    string
	partition atomic.Bool

	mu    sync.Mutex
	conns []net.Conn
	wg    sync.WaitGroup
}

// startProxy proxies to the host:port of endpoint; it is closed at cleanup.
func startProxy(t *testing.T, endpoint string) *proxy {
	t.Helper()
	u, err := url.Parse(endpoint)
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &proxy{ln: ln, target: u.Host}
	p.wg.Go(p.accept)
	t.Cleanup(p.close)
	return p
}

// endpoint is the proxy's URL for an etcd client.
func (p *proxy) endpoint() string { return "http://" + p.ln.Addr().String() }

func (p *proxy) accept() {
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		out, err := net.DialTimeout("tcp", p.target, 5*time.Second)
		if err != nil {
			in.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, in, out)
		p.mu.Unlock()
		p.wg.Go(func() { p.pipe(out, in) })
		p.wg.Go(func() { p.pipe(in, out) })
	}
}

// pipe copies src to dst, dropping the bytes while partitioned.
func (p *proxy) pipe(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && !p.partition.Load() {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			_ = dst.Close()
			return
		}
	}
}

func (p *proxy) close() {
	_ = p.ln.Close()
	p.mu.Lock()
	for _, c := range p.conns {
		_ = c.Close()
	}
	p.mu.Unlock()
	p.wg.Wait()
}
