package builder_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/client"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/manager"
	"github.com/listwatch/listwatch/reflector/controller"
	"github.com/listwatch/listwatch/server"
	"github.com/listwatch/listwatch/storage/etcd3"
)

// env is a manager on the shared etcd (under a prefix of its own), its
// logs and its metrics.
type env struct {
	m    *manager.Manager
	c    client.Client
	reg  *prometheus.Registry
	logs *syncBuffer
}

// newEnv returns a manager over a fresh prefix, not started.
func newEnv(t *testing.T) *env {
	t.Helper()
	kinds, err := client.NewKinds(widget.Scheme)
	require.NoError(t, err)
	e := &env{reg: prometheus.NewRegistry(), logs: &syncBuffer{}}
	prefix := "/" + strings.ReplaceAll(t.Name(), "/", "_") + "-" + time.Now().Format("150405.000000")
	e.m, err = manager.New(manager.Options{Name: "test", Kinds: kinds, Etcd: etcd.Client, EtcdPrefix: prefix,
		Registerer: e.reg, Logger: slog.New(slog.NewJSONHandler(e.logs, nil))})
	require.NoError(t, err)
	e.c = e.m.GetClient()
	return e
}

// start runs the manager until the test ends (then waits for Run).
func (e *env) start(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.m.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			require.NoError(t, err)
		case <-time.After(20 * time.Second):
			t.Error("Run did not return 20s after its ctx ended")
		}
	})
}

// ctx returns a context ending with the test (at most 20 s).
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// recorder is a Reconciler that sends each Request it gets.
type recorder struct{ reqs chan controller.Request }

func newRecorder() *recorder { return &recorder{reqs: make(chan controller.Request, 100)} }

func (r *recorder) Reconcile(_ context.Context, req controller.Request) (controller.Result, error) {
	r.reqs <- req
	return controller.Result{}, nil
}

// next returns the next Request, failing after 10 s.
func (r *recorder) next(t *testing.T) controller.Request {
	t.Helper()
	select {
	case req := <-r.reqs:
		return req
	case <-time.After(10 * time.Second):
		t.Fatal("no Reconcile within 10s")
		return controller.Request{}
	}
}

// expect waits for a Request for name and fails on any other first.
func (r *recorder) expect(t *testing.T, name string) {
	t.Helper()
	req := r.next(t)
	require.Equal(t, name, req.Name, "reconciled %s, want %s", req, name)
}

func req(name string) controller.Request {
	return controller.Request{NamespacedName: client.Key("default", name)}
}

// part returns a Part default/name, controlled by owner when not nil.
func part(t *testing.T, kinds *client.Kinds, name string, owner client.Object) *widget.Part {
	t.Helper()
	p := &widget.Part{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}}
	if owner != nil {
		require.NoError(t, client.SetControllerReference(owner, p, kinds))
	}
	return p
}

// syncBuffer is a bytes.Buffer safe for concurrent writes (log output).
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// newHTTPEnv returns a manager whose client and cache talk HTTP to a
// server over fresh stores (not started).
func newHTTPEnv(t *testing.T) *env {
	t.Helper()
	kinds, err := client.NewKinds(widget.Scheme)
	require.NoError(t, err)
	prefix := "/" + strings.ReplaceAll(t.Name(), "/", "_") + "-" + time.Now().Format("150405.000000")
	var resources []server.Resource
	for _, k := range kinds.All() {
		store, err := etcd3.New(etcd3.Config{Client: etcd.Client, Codec: widget.UnstructuredCodec,
			NewFunc: widget.NewUnstructured, NewListFunc: widget.NewUnstructuredList, Prefix: prefix, ResourcePrefix: k.KeyRoot})
		require.NoError(t, err)
		t.Cleanup(store.Close)
		resources = append(resources, server.Resource{Group: k.GroupVersionKind.Group, Version: k.GroupVersionKind.Version,
			Plural: k.Resource, Kind: k.GroupVersionKind.Kind, Namespaced: true, Storage: store, KeyRoot: k.KeyRoot,
			Subresources: &server.Subresources{Status: true}})
	}
	srv, err := server.New(server.Config{Resources: resources})
	require.NoError(t, err)
	hs := httptest.NewServer(srv)
	t.Cleanup(func() { hs.Close(); srv.Close() })
	e := &env{reg: prometheus.NewRegistry(), logs: &syncBuffer{}}
	e.m, err = manager.New(manager.Options{Name: "test", Kinds: kinds, ServerURL: hs.URL,
		Registerer: e.reg, Logger: slog.New(slog.NewJSONHandler(e.logs, nil))})
	require.NoError(t, err)
	e.c = e.m.GetClient()
	return e
}
