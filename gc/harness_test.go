package gc_test

import (
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/listwatch/listwatch/client"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/manager"
	"github.com/listwatch/listwatch/server"
	"github.com/listwatch/listwatch/storage/etcd3"
)

// waitFor bounds every wait on the collector.
const waitFor = 15 * time.Second

// env is a running manager with its garbage collector, over a fresh
// prefix of the shared etcd.
type env struct {
	t   *testing.T
	ctx context.Context
	c   client.Client
}

// backends runs test against a manager with its garbage collector in
// process (over etcd) and over HTTP (against a server over etcd).
func backends(t *testing.T, test func(t *testing.T, e *env)) {
	t.Run("local", func(t *testing.T) { test(t, start(t, false)) })
	t.Run("http", func(t *testing.T) { test(t, start(t, true)) })
}

// testPrefix is a fresh etcd key prefix for t.
func testPrefix(t *testing.T) string {
	return "/" + strings.ReplaceAll(t.Name(), "/", "_") + "-" + time.Now().Format("150405.000000")
}

// start runs a manager with GarbageCollector over widgets and parts until
// the test ends: in process, or overHTTP against a server of its own.
func start(t *testing.T, overHTTP bool) *env {
	t.Helper()
	kinds, err := client.NewKinds(widget.Scheme)
	require.NoError(t, err)
	opts := manager.Options{Name: "gc-test", Kinds: kinds, GarbageCollector: true}
	if overHTTP {
		opts.ServerURL, opts.QPS = serve(t, kinds), -1
	} else {
		opts.Etcd, opts.EtcdPrefix = etcd.Client, testPrefix(t)
	}
	return startWith(t, opts)
}

// startWith runs a manager with opts (and a logger of the test's) until
// the test ends; the test fails if it logged a warning or an error.
func startWith(t *testing.T, opts manager.Options) *env {
	t.Helper()
	warnings := &warningLog{}
	opts.Logger = slog.New(slog.NewTextHandler(warnings, &slog.HandlerOptions{Level: slog.LevelWarn}))
	m, err := manager.New(opts)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- m.Run(runCtx) }()
	t.Cleanup(func() {
		stop()
		require.NoError(t, <-done)
		cancel()
		require.Empty(t, warnings.String(), "the collector ran and stopped without a warning")
	})
	select {
	case <-m.Elected():
	case <-ctx.Done():
		t.Fatal("the manager did not start its leader-only runnables")
	}
	return &env{t: t, ctx: ctx, c: m.GetClient()}
}

// serve serves the kinds over etcd3 stores under a fresh prefix, over
// HTTP, until the test ends, and returns its URL.
func serve(t *testing.T, kinds *client.Kinds) string {
	t.Helper()
	prefix := testPrefix(t)
	var resources []server.Resource
	for _, k := range kinds.All() {
		st, err := etcd3.New(etcd3.Config{Client: etcd.Client, Codec: widget.UnstructuredCodec,
			NewFunc: widget.NewUnstructured, NewListFunc: func() runtime.Object { return &unstructured.UnstructuredList{} },
			Prefix: prefix, ResourcePrefix: k.KeyRoot})
		require.NoError(t, err)
		t.Cleanup(st.Close)
		gvk := k.GroupVersionKind
		resources = append(resources, server.Resource{Group: gvk.Group, Version: gvk.Version, Plural: k.Resource,
			Kind: gvk.Kind, Namespaced: k.Namespaced, Storage: st, KeyRoot: k.KeyRoot, GetAttrs: k.GetAttrs})
	}
	srv, err := server.New(server.Config{Resources: resources})
	require.NoError(t, err)
	hs := httptest.NewServer(srv)
	t.Cleanup(func() { hs.Close(); srv.Close() })
	return hs.URL
}

// warningLog collects the manager's warnings and errors.
type warningLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (w *warningLog) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *warningLog) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

// widget creates a Widget.
func (e *env) widget(name string) *widget.Widget {
	e.t.Helper()
	w := widget.NewWidget("default", name)
	require.NoError(e.t, e.c.Create(e.ctx, w))
	return w
}

// part creates a Part with refs as its ownerReferences and finalizers.
func (e *env) part(name string, refs []metav1.OwnerReference, finalizers ...string) *widget.Part {
	e.t.Helper()
	p := &widget.Part{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, OwnerReferences: refs,
		Finalizers: finalizers}}
	require.NoError(e.t, e.c.Create(e.ctx, p))
	return p
}

// ref is an ownerReference to obj (of kind), blocking its owner's
// foreground deletion when block.
func ref(kind string, obj metav1.Object, block bool) metav1.OwnerReference {
	return metav1.OwnerReference{APIVersion: widget.GroupVersion.String(), Kind: kind, Name: obj.GetName(),
		UID: obj.GetUID(), BlockOwnerDeletion: ptr.To(block)}
}

// refs is a list of ownerReferences.
func refs(rs ...metav1.OwnerReference) []metav1.OwnerReference { return rs }

// get reads obj's current state from storage into obj; false when gone.
func (e *env) get(obj client.Object) bool {
	e.t.Helper()
	err := e.c.Get(e.ctx, client.KeyOf(obj), obj, client.FromStorage)
	if client.IsNotFound(err) {
		return false
	}
	require.NoError(e.t, err)
	return true
}

// gone waits until every obj is gone.
func (e *env) gone(objs ...client.Object) {
	e.t.Helper()
	for _, o := range objs {
		o := o.DeepCopyObject().(client.Object)
		require.Eventually(e.t, func() bool { return !e.get(o) }, waitFor, 5*time.Millisecond,
			"%T %s is still there", o, o.GetName())
	}
}

// until waits until cond holds of obj's current state (which must exist).
func (e *env) until(obj client.Object, what string, cond func(client.Object) bool) {
	e.t.Helper()
	o := obj.DeepCopyObject().(client.Object)
	require.Eventually(e.t, func() bool { return e.get(o) && cond(o) }, waitFor, 5*time.Millisecond,
		"%T %s: %s", o, o.GetName(), what)
}

// release removes obj's finalizers (a hold the test put on it).
func (e *env) release(obj client.Object) {
	e.t.Helper()
	require.Eventually(e.t, func() bool { // the collector may write the object meanwhile: a conflict
		o := obj.DeepCopyObject().(client.Object)
		require.True(e.t, e.get(o))
		o.SetFinalizers(slicesWithout(o.GetFinalizers(), hold))
		err := e.c.Update(e.ctx, o)
		if !client.IsConflict(err) {
			require.NoError(e.t, err)
		}
		return err == nil
	}, waitFor, 5*time.Millisecond)
}

// hold is a finalizer of the tests: an object marked for deletion stays
// until the test releases it.
const hold = "test.listwatch.dev/hold"

func slicesWithout(s []string, drop string) []string {
	out := []string{}
	for _, x := range s {
		if x != drop {
			out = append(out, x)
		}
	}
	return out
}

// marked reports whether o is marked for deletion.
func marked(o client.Object) bool { return o.GetDeletionTimestamp() != nil }

// policy is a delete option with p.
func policy(p metav1.DeletionPropagation) client.DeleteOption { return client.PropagationPolicy(p) }

// fakeUID is a UID no object has.
func fakeUID(s string) types.UID { return types.UID("00000000-0000-0000-0000-" + s) }
