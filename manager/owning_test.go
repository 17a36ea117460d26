package manager_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/listwatch/cache"
	"github.com/listwatch/listwatch/cacher"
	lwclient "github.com/listwatch/listwatch/client"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/manager"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/storage/etcd3"
)

// lockedBuffer collects log lines from concurrent writers.
type lockedBuffer struct {
	mu    sync.Mutex
	lines []string
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.lines = append(b.lines, strings.TrimSpace(string(p)))
	return len(p), nil
}

// messages returns the msg of every JSON log line, in order.
func (b *lockedBuffer) messages(t *testing.T) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, l := range b.lines {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m))
		out = append(out, m["msg"].(string))
	}
	return out
}

// find returns the first JSON log line whose msg contains msg.
func (b *lockedBuffer) find(t *testing.T, msg string) map[string]any {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, l := range b.lines {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && strings.Contains(m["msg"].(string), msg) {
			return m
		}
	}
	t.Fatalf("no log line %q", msg)
	return nil
}

// indexOf returns the position of the first message containing s.
func indexOf(t *testing.T, msgs []string, s string) int {
	t.Helper()
	for i, m := range msgs {
		if strings.Contains(m, s) {
			return i
		}
	}
	t.Fatalf("no log message %q in %q", s, msgs)
	return -1
}

// TestManagerOwnsItsStorageAndCaches: Run starts the cachers it made (and
// waits for them), then the cache's informers, then the Runnables, which
// find the cache synced and read through the manager's client; it stops
// them in the reverse order and closes what it made. goleak (TestMain)
// checks that nothing is left running.
func TestManagerOwnsItsStorageAndCaches(t *testing.T) {
	logs := &lockedBuffer{}
	kinds, err := lwclient.NewKinds(widget.Scheme)
	require.NoError(t, err)
	m, err := manager.New(manager.Options{Name: "owner", Kinds: kinds, Etcd: etcd.Client, EtcdPrefix: testPrefix(t),
		Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	require.NoError(t, err)
	inf, err := m.GetCache().InformerFor(&widget.Widget{}) // a cacher and an informer for Widgets
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	read := make(chan error, 1)
	require.NoError(t, m.Add(manager.RunnableFunc(func(ctx context.Context) error {
		m.GetLogger().Info("runnable started")
		if err := m.GetClient().Create(ctx, widget.NewWidget("default", "w1")); err != nil {
			read <- err
			return err
		}
		// The write is seen through the cache once its informer has it.
		var w widget.Widget
		for {
			err := m.GetClient().Get(ctx, lwclient.Key("default", "w1"), &w)
			if !lwclient.IsNotFound(err) {
				read <- err
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		<-ctx.Done()
		m.GetLogger().Info("runnable stopped")
		return nil
	})))
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- m.Run(runCtx) }()
	require.NoError(t, <-read)
	require.Equal(t, 200, probe(t, m, "/readyz"))
	stop()
	require.NoError(t, <-done)

	msgs := logs.messages(t)
	order := []string{"cachers ready", "cache started", "runnable started", "runnable stopped",
		"runnables stopped; stopping the cache", "cachers stopped and stores closed", "stopped"}
	last := -1
	for _, s := range order {
		i := indexOf(t, msgs[last+1:], s) + last + 1
		require.Greater(t, i, last, "%q out of order in %q", s, msgs)
		last = i
	}
	require.True(t, inf.IsStopped(), "the informer stopped with Run")
	require.ErrorIs(t, m.GetCache().Get(ctx, lwclient.Key("default", "w1"), &widget.Widget{}), cache.ErrStopped,
		"no stale cache reads once Run returned")
}

// TestCurrentLeader: CurrentLeader names the leader from etcd, the
// standby's /readyz?verbose names it too, manager_leader_info says who
// leads, and after the leader resigns the standby is named.
func TestCurrentLeader(t *testing.T) {
	prefix := testPrefix(t)
	key := prefix + "/leader"
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	_, err := manager.CurrentLeader(ctx, etcd.Client, key)
	require.ErrorIs(t, err, manager.ErrNoLeader)

	rec := &recorder{}
	regA, regB := prometheus.NewRegistry(), prometheus.NewRegistry()
	leA, leB := leaderElection(etcd.Client, key), leaderElection(etcd.Client, key)
	leA.ReleaseOnCancel = true
	a := newReplicaWith(t, "a", etcd.Client, prefix, rec, manager.Options{Name: "widgets", LeaderElection: leA, Registerer: regA})
	b := newReplicaWith(t, "b", etcd.Client, prefix, rec, manager.Options{Name: "widgets", LeaderElection: leB, Registerer: regB})
	a.start(t)
	a.waitElected(t, 10*time.Second)
	b.start(t)

	l, err := manager.CurrentLeader(ctx, etcd.Client, key)
	require.NoError(t, err)
	require.Equal(t, "a", l.Identity)
	require.NotZero(t, l.Revision)
	require.True(t, strings.HasPrefix(l.Key, key+"/"))

	require.Eventually(t, func() bool { return strings.Contains(verbose(t, b.m), "leader: false (identity b; leader: a)") },
		10*time.Second, 10*time.Millisecond, "the standby's /readyz?verbose names the leader")
	require.Contains(t, verbose(t, a.m), "leader: true (identity a)")
	require.Equal(t, 1.0, leaderInfo(t, regA, "a"))
	require.Equal(t, 0.0, leaderInfo(t, regB, "b"))

	require.NoError(t, a.stop(t))
	b.waitElected(t, 10*time.Second)
	l, err = manager.CurrentLeader(ctx, etcd.Client, key)
	require.NoError(t, err)
	require.Equal(t, "b", l.Identity)
	require.Equal(t, 1.0, leaderInfo(t, regB, "b"))
	require.Equal(t, 0.0, leaderInfo(t, regA, "a"))
}

// verbose returns the body of /readyz?verbose (or of /healthz?verbose when
// not ready).
func verbose(t *testing.T, m *manager.Manager) string {
	t.Helper()
	var body string
	require.Eventually(t, func() bool {
		rr := httptest.NewRecorder()
		m.ProbeHandler().ServeHTTP(rr, httptest.NewRequest(http.MethodGet, "/readyz?verbose", nil))
		body = rr.Body.String()
		return rr.Code == http.StatusOK
	}, 10*time.Second, 10*time.Millisecond)
	return body
}

// leaderInfo returns manager_leader_info{identity=identity} in reg.
func leaderInfo(t *testing.T, reg *prometheus.Registry, identity string) float64 {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() != "manager_leader_info" {
			continue
		}
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "identity" && l.GetValue() == identity {
					return m.GetGauge().GetValue()
				}
			}
		}
	}
	t.Fatal(errors.New("no manager_leader_info for " + identity))
	return 0
}

// TestManagerRunsGivenStorage: a cacher given in Options.Storage is run,
// waited for, served through the client and cache, and stopped with the
// manager; the store under it is the caller's.
func TestManagerRunsGivenStorage(t *testing.T) {
	kinds, err := lwclient.NewKinds(widget.Scheme)
	require.NoError(t, err)
	gvk := widget.GroupVersion.WithKind(widget.Kind)
	store, err := etcd3.New(etcd3.Config{Client: etcd.Client, Codec: widget.Codec, NewFunc: widget.New,
		NewListFunc: widget.NewList, Prefix: testPrefix(t), ResourcePrefix: widget.KeyRoot})
	require.NoError(t, err)
	defer store.Close()
	c, err := cacher.New(cacher.Config{Storage: store, ResourcePrefix: widget.KeyRoot, NewFunc: widget.New,
		NewListFunc: widget.NewList, GetAttrs: widget.GetAttrs})
	require.NoError(t, err)
	m, err := manager.New(manager.Options{Name: "given", Kinds: kinds,
		Storage: map[schema.GroupVersionKind]storage.Interface{gvk: c}})
	require.NoError(t, err)
	_, err = m.GetCache().InformerFor(&widget.Widget{})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- m.Run(runCtx) }()

	require.NoError(t, m.GetClient().Create(ctx, widget.NewWidget("default", "w1")))
	require.Eventually(t, func() bool {
		return m.GetClient().Get(ctx, lwclient.Key("default", "w1"), &widget.Widget{}) == nil
	}, 10*time.Second, 5*time.Millisecond, "read through the cache over the given cacher")
	require.NoError(t, c.ReadinessCheck(), "the manager ran the given cacher")
	err = m.GetClient().Get(ctx, lwclient.Key("default", "x"), &widget.Part{})
	require.ErrorIs(t, err, manager.ErrNoBackend, "no Etcd: only the given kinds")
	stop()
	require.NoError(t, <-done)
	require.Error(t, c.Run(ctx), "the given cacher ran and stopped with the manager")
}

// TestManagerClientPropagatesDeletes: with Options.GarbageCollector, the
// dependents of an object deleted through the manager's client go with
// it, collected by the manager's garbage collector, whose controllers
// record their reconciles on the manager's Registerer.
func TestManagerClientPropagatesDeletes(t *testing.T) {
	kinds, err := lwclient.NewKinds(widget.Scheme)
	require.NoError(t, err)
	reg := prometheus.NewRegistry()
	m, err := manager.New(manager.Options{Name: "gc", Kinds: kinds, Etcd: etcd.Client, EtcdPrefix: testPrefix(t),
		GarbageCollector: true, Registerer: reg})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- m.Run(runCtx) }()
	defer func() { stop(); require.NoError(t, <-done) }()

	c := m.GetClient()
	w := widget.NewWidget("default", "w1")
	require.NoError(t, c.Create(ctx, w))
	p := &widget.Part{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "w1-0"}}
	require.NoError(t, lwclient.SetControllerReference(w, p, kinds))
	require.NoError(t, c.Create(ctx, p))
	require.NoError(t, c.Delete(ctx, w, lwclient.PropagationPolicy(metav1.DeletePropagationBackground)))
	require.Eventually(t, func() bool {
		err := c.Get(ctx, lwclient.KeyOf(p), &widget.Part{}, lwclient.FromStorage)
		return lwclient.IsNotFound(err)
	}, 15*time.Second, 5*time.Millisecond, "the Part goes with its Widget")
	// The reconcile is counted when it returns, a moment after its delete.
	require.Eventually(t, func() bool { return reconciles(t, reg, "garbagecollector-parts.demo.listwatch.dev") > 0 },
		10*time.Second, 5*time.Millisecond, "the collector's reconciles are on the manager's Registerer")
}

// reconciles returns the value of controller_runtime_reconcile_total of
// controller (all results).
func reconciles(t *testing.T, reg *prometheus.Registry, controller string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	total := 0.0
	for _, mf := range mfs {
		if mf.GetName() != "controller_runtime_reconcile_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "controller" && l.GetValue() == controller {
					total += m.GetCounter().GetValue()
				}
			}
		}
	}
	return total
}

// TestGarbageCollectorLeaderOnly: of two replicas with GarbageCollector,
// only the leader collects: a dependent deleted through the standby's
// client goes, reconciled by the leader's collector alone.
func TestGarbageCollectorLeaderOnly(t *testing.T) {
	prefix := testPrefix(t)
	createWidget(t, prefix, "w1")
	rec := &recorder{}
	key := prefix + "/leader"
	ca, cb := newClient(t, etcd.Endpoints[0]), newClient(t, etcd.Endpoints[0])
	regA, regB := prometheus.NewRegistry(), prometheus.NewRegistry()
	a := newReplicaWith(t, "a", ca, prefix, rec, manager.Options{Name: "widgets", LeaderElection: leaderElection(ca, key),
		GarbageCollector: true, Registerer: regA})
	b := newReplicaWith(t, "b", cb, prefix, rec, manager.Options{Name: "widgets", LeaderElection: leaderElection(cb, key),
		GarbageCollector: true, Registerer: regB})
	startPair(t, a, b, rec)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c := b.m.GetClient()
	w := widget.NewWidget("default", "owner")
	require.NoError(t, c.Create(ctx, w))
	p := &widget.Part{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "owner-0"}}
	require.NoError(t, lwclient.SetControllerReference(w, p, c.Kinds()))
	require.NoError(t, c.Create(ctx, p))
	require.NoError(t, c.Delete(ctx, w))
	require.Eventually(t, func() bool {
		return lwclient.IsNotFound(c.Get(ctx, lwclient.KeyOf(p), &widget.Part{}, lwclient.FromStorage))
	}, 15*time.Second, 5*time.Millisecond, "the leader collects the Part")
	// The reconcile is counted when it returns, a moment after its delete.
	require.Eventually(t, func() bool { return reconciles(t, regA, "garbagecollector-parts.demo.listwatch.dev") > 0 },
		10*time.Second, 5*time.Millisecond, "the leader's collector reconciled")
	require.Zero(t, reconciles(t, regB, "garbagecollector-parts.demo.listwatch.dev"), "the standby collected")
	require.False(t, b.m.IsLeader())
}
