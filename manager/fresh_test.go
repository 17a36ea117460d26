package manager_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"go.etcd.io/etcd/client/v3/concurrency"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	lwclient "github.com/listwatch/listwatch/client"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/manager"
	"github.com/listwatch/listwatch/server"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/storage/etcd3"
)

// heldStore is an etcd3 store whose watches deliver nothing until release
// is closed: an informer that lags behind etcd (a standby whose watch is
// slow, or missed the old leader's last writes so far).
type heldStore struct {
	*etcd3.Store
	release chan struct{}
}

func (s *heldStore) Watch(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	w, err := s.Store.Watch(ctx, key, opts)
	if err != nil {
		return nil, err
	}
	h := &heldWatch{inner: w, out: make(chan watch.Event), stop: make(chan struct{})}
	go h.run(s.release)
	return h, nil
}

// heldWatch forwards inner's events once release is closed.
type heldWatch struct {
	inner watch.Interface
	out   chan watch.Event
	stop  chan struct{}
	once  sync.Once
}

func (h *heldWatch) run(release <-chan struct{}) {
	defer close(h.out)
	select {
	case <-release:
	case <-h.stop:
		return
	}
	for {
		select {
		case ev, ok := <-h.inner.ResultChan():
			if !ok {
				return
			}
			select {
			case h.out <- ev:
			case <-h.stop:
				return
			}
		case <-h.stop:
			return
		}
	}
}

func (h *heldWatch) ResultChan() <-chan watch.Event { return h.out }
func (h *heldWatch) Stop()                          { h.once.Do(func() { close(h.stop); h.inner.Stop() }) }

// TestNewLeaderWaitsForFreshCaches: a standby whose informer has synced
// but not yet seen a Widget written afterwards (its watch is held) is
// elected. Its leader-only Runnable must not start on that cache: the
// manager waits, each attempt bounded by FreshnessTimeout, and reports
// the wait (log, metrics, /readyz naming the informer and the revisions);
// once the watch delivers, the Runnable starts and finds the Widget in
// the cache. Without the wait it would start at once and not find it.
func TestNewLeaderWaitsForFreshCaches(t *testing.T) {
	prefix := testPrefix(t)
	createWidget(t, prefix, "before")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// Another candidate leads until the test resigns it.
	key := prefix + "/leader"
	sess, err := concurrency.NewSession(etcd.Client)
	require.NoError(t, err)
	defer sess.Close()
	holder := concurrency.NewElection(sess, key)
	require.NoError(t, holder.Campaign(ctx, "holder"))

	store, err := etcd3.New(etcd3.Config{Client: etcd.Client, Codec: widget.Codec, NewFunc: widget.New,
		NewListFunc: widget.NewList, Prefix: prefix, ResourcePrefix: widget.KeyRoot})
	require.NoError(t, err)
	held := &heldStore{Store: store, release: make(chan struct{})}
	kinds, err := lwclient.NewKinds(widget.Scheme)
	require.NoError(t, err)
	logs := &lockedBuffer{}
	reg := prometheus.NewRegistry()
	le := leaderElection(etcd.Client, key)
	le.Identity = "new-leader"
	m, err := manager.New(manager.Options{Name: "fresh", Kinds: kinds, LeaderElection: le, Registerer: reg,
		Storage:          map[schema.GroupVersionKind]storage.Interface{widget.GroupVersion.WithKind(widget.Kind): held},
		FreshnessTimeout: 300 * time.Millisecond,
		Logger:           slog.New(slog.NewJSONHandler(io.MultiWriter(t.Output(), logs), nil))})
	require.NoError(t, err)
	_, err = m.GetCache().InformerFor(&widget.Widget{})
	require.NoError(t, err)
	sawAfter := make(chan bool, 1)
	require.NoError(t, m.Add(manager.RunnableFunc(func(ctx context.Context) error {
		err := m.GetCache().Get(ctx, lwclient.Key("default", "after"), &widget.Widget{})
		sawAfter <- err == nil
		<-ctx.Done()
		return nil
	})))
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	defer func() { cancel(); require.NoError(t, <-done) }()

	// Standby, synced; then a write its informer does not see.
	require.Eventually(t, func() bool { return probe(t, m, "/readyz") == http.StatusOK }, 10*time.Second, 5*time.Millisecond)
	createWidget(t, prefix, "after")
	require.NoError(t, holder.Resign(ctx))

	// Elected, waiting: each attempt runs out, is logged and counted, and
	// /readyz says why.
	require.Eventually(t, func() bool { return metricValue(t, reg, "manager_cache_freshness_timeouts_total") >= 2 }, 10*time.Second, 10*time.Millisecond, "two attempts ran out")
	require.False(t, m.IsLeader(), "leader-only runnables started on a stale cache")
	select {
	case saw := <-sawAfter:
		t.Fatalf("the leader-only runnable started before the cache was fresh (saw the write: %v)", saw)
	default:
	}
	logged := logs.find(t, "caches not fresh")
	require.Equal(t, "ERROR", logged["level"])
	require.Contains(t, logged["err"], "widgets.v1.demo.listwatch.dev: at resourceVersion")
	rr := httptest.NewRecorder()
	m.ProbeHandler().ServeHTTP(rr, httptest.NewRequest(http.MethodGet, "/readyz", nil))
	require.Equal(t, http.StatusInternalServerError, rr.Code)
	require.Contains(t, rr.Body.String(), "[-]caches-fresh failed: elected, but the cache has not caught up")
	require.Contains(t, rr.Body.String(), "widgets.v1.demo.listwatch.dev: at resourceVersion")
	rr = httptest.NewRecorder()
	m.ProbeHandler().ServeHTTP(rr, httptest.NewRequest(http.MethodGet, "/healthz?verbose", nil))
	require.Equal(t, http.StatusOK, rr.Code, "waiting for fresh caches is not unhealthy")
	require.Contains(t, rr.Body.String(), "leader: elected, waiting for fresh caches before starting (identity new-leader)")
	require.Equal(t, 1.0, metricValue(t, reg, "manager_cache_freshness_waiting"))

	// The watch delivers: the runnable starts and sees the write.
	close(held.release)
	select {
	case saw := <-sawAfter:
		require.True(t, saw, "the new leader's runnable started on a cache without the write made before its election")
	case <-ctx.Done():
		t.Fatal("the leader-only runnable never started")
	}
	require.True(t, m.IsLeader())
	require.Equal(t, http.StatusOK, probe(t, m, "/readyz"), "caches-fresh passes once fresh")
	require.Equal(t, 0.0, metricValue(t, reg, "manager_cache_freshness_waiting"))
}

// metricValue returns the value of the one series of the gauge or counter
// name in reg (0 when it has none).
func metricValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		require.Len(t, mf.GetMetric(), 1, name)
		if c := mf.GetMetric()[0].GetCounter(); c != nil {
			return c.GetValue()
		}
		return mf.GetMetric()[0].GetGauge().GetValue()
	}
	return 0
}

// TestNewLeaderOverHTTPWithoutBookmarks: over HTTP to a server that never
// sends bookmarks (its storage is etcd3, no cacher), a new leader whose
// Widget informer is behind etcd's revision only because other keys were
// written cannot learn from a bookmark that it is current: its informer
// relists with a consistent read, and the leader-only runnable starts.
func TestNewLeaderOverHTTPWithoutBookmarks(t *testing.T) {
	prefix := testPrefix(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	kinds, err := lwclient.NewKinds(widget.Scheme)
	require.NoError(t, err)
	k, _ := kinds.Get(widget.GroupVersion.WithKind(widget.Kind))
	store, err := etcd3.New(etcd3.Config{Client: etcd.Client, Codec: widget.UnstructuredCodec,
		NewFunc: widget.NewUnstructured, NewListFunc: widget.NewUnstructuredList, Prefix: prefix, ResourcePrefix: k.KeyRoot})
	require.NoError(t, err)
	defer store.Close()
	srv, err := server.New(server.Config{Resources: []server.Resource{{Group: widget.GroupVersion.Group,
		Version: widget.GroupVersion.Version, Plural: k.Resource, Kind: widget.Kind, Namespaced: true, Storage: store,
		KeyRoot: k.KeyRoot}}})
	require.NoError(t, err)
	hs := httptest.NewServer(srv)
	defer func() { hs.Close(); srv.Close() }()

	key := prefix + "/leader"
	sess, err := concurrency.NewSession(etcd.Client)
	require.NoError(t, err)
	defer sess.Close()
	holder := concurrency.NewElection(sess, key)
	require.NoError(t, holder.Campaign(ctx, "holder"))

	logs := &lockedBuffer{}
	le := leaderElection(etcd.Client, key)
	le.Identity = "new-leader"
	m, err := manager.New(manager.Options{Name: "fresh-http", Kinds: kinds, LeaderElection: le, ServerURL: hs.URL,
		Logger: slog.New(slog.NewJSONHandler(io.MultiWriter(t.Output(), logs), nil))})
	require.NoError(t, err)
	_, err = m.GetCache().InformerFor(&widget.Widget{})
	require.NoError(t, err)
	started := make(chan struct{})
	require.NoError(t, m.Add(manager.RunnableFunc(func(ctx context.Context) error {
		close(started)
		<-ctx.Done()
		return nil
	})))
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	defer func() { cancel(); require.NoError(t, <-done) }()
	require.Eventually(t, func() bool { return probe(t, m, "/readyz") == http.StatusOK }, 10*time.Second, 5*time.Millisecond)

	// etcd's revision moves on, the Widgets do not change.
	_, err = etcd.Client.Put(ctx, prefix+"/elsewhere", "x")
	require.NoError(t, err)
	require.NoError(t, holder.Resign(ctx))
	select {
	case <-started:
	case <-ctx.Done():
		t.Fatal("the leader-only runnable never started")
	}
	relisted := logs.find(t, "relisting it")
	require.Equal(t, "widgets.v1.demo.listwatch.dev", relisted["resource"])
}
