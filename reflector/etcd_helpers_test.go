package reflector

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/storage/etcd3"
)

const widgetsPrefix = "/widgets"

func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// newEtcdStore returns an etcd3 Widget store under the test's own prefix.
func newEtcdStore(t testing.TB) *etcd3.Store {
	t.Helper()
	return newEtcdStoreWithClient(t, etcdServer.Client)
}

// newEtcdStoreWithClient is newEtcdStore over a given etcd client.
func newEtcdStoreWithClient(t testing.TB, cli *clientv3.Client) *etcd3.Store {
	t.Helper()
	// Start empty even when the test runs again (-count) on the shared etcd.
	if _, err := etcdServer.Client.Delete(testCtx(t), embedtest.Prefix(t), clientv3.WithPrefix()); err != nil {
		t.Fatal(err)
	}
	s, err := etcd3.New(etcd3.Config{Client: cli, Codec: widget.Codec, NewFunc: widget.New,
		NewListFunc: widget.NewList, Prefix: embedtest.Prefix(t), ResourcePrefix: widgetsPrefix})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// newCacher runs a cacher over s until the test ends.
func newCacher(t testing.TB, s storage.Interface) *cacher.Cacher {
	t.Helper()
	c, err := cacher.New(cacher.Config{Storage: s, ResourcePrefix: widgetsPrefix,
		NewFunc: widget.New, NewListFunc: widget.NewList, GetAttrs: widget.GetAttrs})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = c.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	wctx, wcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer wcancel()
	if err := c.WaitReady(wctx); err != nil {
		t.Fatal(err)
	}
	return c
}

// backends returns the storage stacks the integration tests run against.
func backends(t *testing.T) map[string]func(t *testing.T) (writer, reader storage.Interface) {
	return map[string]func(t *testing.T) (storage.Interface, storage.Interface){
		"etcd3": func(t *testing.T) (storage.Interface, storage.Interface) {
			s := newEtcdStore(t)
			return s, s
		},
		"cacher": func(t *testing.T) (storage.Interface, storage.Interface) {
			// The cacher gets its own client, hence its own etcd watch
			// stream: etcd answers a progress request only when every
			// watch on the stream is synced, and the cacher's consistent
			// reads wait for that answer.
			cli, err := embedtest.NewClient(etcdServer.Endpoints)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { cli.Close() })
			s := newEtcdStoreWithClient(t, cli)
			return s, newCacher(t, s)
		},
	}
}

func wkey(ns, name string) string { return widgetsPrefix + "/" + ns + "/" + name }

func create(t testing.TB, s storage.Interface, ns, name string) *widget.Widget {
	t.Helper()
	out := &widget.Widget{}
	if err := s.Create(testCtx(t), wkey(ns, name), widget.NewWidget(ns, name).WithLabels(map[string]string{"app": "x"}), out, 0); err != nil {
		t.Fatalf("create %s/%s: %v", ns, name, err)
	}
	return out
}

func bump(t testing.TB, s storage.Interface, ns, name string) error {
	return s.GuaranteedUpdate(testCtx(t), wkey(ns, name), &widget.Widget{}, false, nil,
		func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
			w := in.(*widget.Widget).DeepCopy()
			w.Spec.Replicas++
			return w, nil, nil
		}, nil, storage.UpdateOptions{})
}

func remove(t testing.TB, s storage.Interface, ns, name string) error {
	return s.Delete(testCtx(t), wkey(ns, name), &widget.Widget{}, nil, storage.ValidateAllObjectFunc, nil, storage.DeleteOptions{})
}

// etcdState is key → RV of everything in s, read consistently.
func etcdState(t testing.TB, s storage.Interface) map[string]string {
	t.Helper()
	list := &widget.WidgetList{}
	if err := s.GetList(testCtx(t), widgetsPrefix, storage.ListOptions{Recursive: true, Predicate: storage.Everything}, list); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, w := range list.Items {
		out[w.Namespace+"/"+w.Name] = w.ResourceVersion
	}
	return out
}

func storeState(s Store[*widget.Widget]) map[string]string {
	out := map[string]string{}
	for _, w := range s.List() {
		out[w.Namespace+"/"+w.Name] = w.ResourceVersion
	}
	return out
}

// waitConverged waits until every state function returns etcd's state.
func waitConverged(t *testing.T, etcd storage.Interface, states map[string]func() map[string]string) {
	t.Helper()
	want := etcdState(t, etcd)
	deadline := time.Now().Add(30 * time.Second)
	for name, got := range states {
		for !maps.Equal(got(), want) {
			if time.Now().After(deadline) {
				g := got()
				t.Fatalf("%s did not converge: %d keys, etcd has %d; diff %v", name, len(g), len(want), diffStates(g, want))
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

func diffStates(got, want map[string]string) []string {
	var d []string
	for k, v := range want {
		if got[k] != v {
			d = append(d, fmt.Sprintf("%s: got %q want %q", k, got[k], v))
		}
	}
	for k, v := range got {
		if _, ok := want[k]; !ok {
			d = append(d, fmt.Sprintf("%s: extra %q", k, v))
		}
	}
	if len(d) > 10 {
		d = d[:10]
	}
	return d
}

// mirrorHandler keeps the state a handler learns from its events.
type mirrorHandler struct {
	mu        sync.Mutex
	state     map[string]string
	adds      map[string]int
	tombstone map[string]int
}

func newMirror() *mirrorHandler {
	return &mirrorHandler{state: map[string]string{}, adds: map[string]int{}, tombstone: map[string]int{}}
}

func (m *mirrorHandler) OnAdd(w *widget.Widget, _ bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := w.Namespace + "/" + w.Name
	m.state[k] = w.ResourceVersion
	m.adds[k]++
}

func (m *mirrorHandler) OnUpdate(_, w *widget.Widget) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.state[w.Namespace+"/"+w.Name] = w.ResourceVersion
}

func (m *mirrorHandler) OnDelete(w *widget.Widget, unknown bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k := w.Namespace + "/" + w.Name
	delete(m.state, k)
	if unknown {
		m.tombstone[k]++
	}
}

func (m *mirrorHandler) snapshot() map[string]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.state)
}

// countingLW counts the calls to an inner ListerWatcher and lets a test
// break the open watches or hold new ones at a gate.
type countingLW struct {
	inner   ListerWatcher
	lists   atomic.Int64
	watches atomic.Int64

	mu      sync.Mutex
	open    []watch.Interface
	gate    chan struct{} // when non-nil, Watch waits for it to close
	waiting chan struct{} // receives when a Watch waits at the gate
}

func (l *countingLW) List(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
	l.lists.Add(1)
	return l.inner.List(ctx, opts)
}

func (l *countingLW) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	l.mu.Lock()
	gate, waiting := l.gate, l.waiting
	l.mu.Unlock()
	if gate != nil {
		select {
		case waiting <- struct{}{}:
		default:
		}
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	l.watches.Add(1)
	w, err := l.inner.Watch(ctx, opts)
	if err == nil {
		l.mu.Lock()
		l.open = append(l.open, w)
		l.mu.Unlock()
	}
	return w, err
}

// holdWatches makes later Watch calls wait until the returned release
// function is called; wait returns once a Watch call is held.
func (l *countingLW) holdWatches() (wait func(t *testing.T), release func()) {
	gate, waiting := make(chan struct{}), make(chan struct{}, 1)
	l.mu.Lock()
	l.gate, l.waiting = gate, waiting
	l.mu.Unlock()
	wait = func(t *testing.T) {
		t.Helper()
		select {
		case <-waiting:
		case <-time.After(30 * time.Second):
			t.Fatal("no watch reached the gate")
		}
	}
	release = func() {
		l.mu.Lock()
		l.gate = nil
		l.mu.Unlock()
		close(gate)
	}
	return wait, release
}

// breakWatches waits until a watch is open, then stops every watch opened
// so far: their result channels close, as when a connection drops or a
// server ends a watch.
func (l *countingLW) breakWatches(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		l.mu.Lock()
		open := l.open
		if len(open) > 0 {
			l.open = nil
			l.mu.Unlock()
			for _, w := range open {
				w.Stop()
			}
			return
		}
		l.mu.Unlock()
		if time.Now().After(deadline) {
			t.Fatal("no open watch to break")
		}
		time.Sleep(time.Millisecond)
	}
}

func listOpts(label, field string) metav1.ListOptions {
	return metav1.ListOptions{LabelSelector: label, FieldSelector: field}
}

func isBadRequest(err error) bool { return apierrors.IsBadRequest(err) }
