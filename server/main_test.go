package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/storage/etcd3"
)

// etcdServer is the one embedded etcd of the package's tests and
// benchmarks; each test uses its own key prefix.
var etcdServer *embedtest.Server

func TestMain(m *testing.M) {
	if os.Getenv(fanoutChildEnv) != "" {
		os.Exit(fanoutChild(os.Getenv(fanoutChildEnv)))
	}
	os.Exit(embedtest.RunMain(m, &etcdServer, embedtest.Options{}))
}

const (
	group   = "demo.listwatch.dev"
	apiBase = "/apis/demo.listwatch.dev/v1"
)

// cleaned records the tests whose prefix has been emptied.
var cleaned sync.Map

// cleanPrefix empties the test's key prefix once per test run, so that
// tests pass again with -count on the shared etcd.
func cleanPrefix(tb testing.TB) {
	tb.Helper()
	if _, done := cleaned.LoadOrStore(tb, true); done {
		return
	}
	_, err := etcdServer.Client.Delete(testCtx(tb), embedtest.Prefix(tb), clientv3.WithPrefix())
	require.NoError(tb, err)
}

// newStore returns an etcd3 store of unstructured objects below the
// test's own (emptied) prefix.
func newStore(tb testing.TB, resourcePrefix string) *etcd3.Store {
	tb.Helper()
	cleanPrefix(tb)
	st, err := etcd3.New(etcd3.Config{
		Client: etcdServer.Client, Codec: widget.UnstructuredCodec,
		NewFunc: widget.NewUnstructured, NewListFunc: widget.NewUnstructuredList,
		Prefix: embedtest.Prefix(tb), ResourcePrefix: resourcePrefix,
	})
	require.NoError(tb, err)
	tb.Cleanup(st.Close)
	return st
}

// widgets is the namespaced test resource over st.
func widgets(st storage.Interface) Resource {
	return Resource{Group: group, Version: "v1", Plural: "widgets", Kind: "Widget", Namespaced: true,
		Storage: st, KeyRoot: "/widgets", GetAttrs: widget.GetAttrs, SelectableFields: []string{"spec.nodeName"}}
}

// gadgets is the cluster-scoped test resource over st.
func gadgets(st storage.Interface) Resource {
	return Resource{Group: group, Version: "v1", Plural: "gadgets", Kind: "Gadget", Storage: st, KeyRoot: "/gadgets"}
}

// fixture is a Server over real etcd behind an httptest server.
type fixture struct {
	t       testing.TB
	widgets *etcd3.Store
	srv     *Server
	ts      *httptest.Server
	client  *http.Client
	// timeout bounds each request (0: 30 s).
	timeout time.Duration
}

// newFixture serves widgets and gadgets; edit may change the Config.
func newFixture(tb testing.TB, edit ...func(*Config)) *fixture {
	tb.Helper()
	f := &fixture{t: tb, widgets: newStore(tb, "/widgets")}
	cfg := Config{
		Resources: []Resource{widgets(f.widgets), gadgets(newStore(tb, "/gadgets"))},
		Logger:    slog.New(slog.NewTextHandler(tb.Output(), &slog.HandlerOptions{Level: slog.LevelInfo})),
	}
	for _, e := range edit {
		e(&cfg)
	}
	srv, err := New(cfg)
	require.NoError(tb, err)
	f.srv = srv
	f.ts = httptest.NewServer(srv)
	f.client = &http.Client{Transport: &http.Transport{}}
	tb.Cleanup(func() {
		srv.Close()
		f.ts.Close()
		f.client.CloseIdleConnections()
	})
	return f
}

// untilTestDeadline is 9/10 of the time left before the test binary's
// deadline (-timeout), or 10 minutes without one: a bound for requests
// whose latency is not what a test checks and scales with the machine's
// load.
func untilTestDeadline(t *testing.T) time.Duration {
	if d, ok := t.Deadline(); ok {
		return max(time.Until(d)*9/10, time.Second)
	}
	return 10 * time.Minute
}

func testCtx(tb testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	tb.Cleanup(cancel)
	return ctx
}

// response is a finished HTTP exchange.
type response struct {
	code   int
	header http.Header
	body   []byte
}

// do sends a request; body may be nil, a string, []byte or a value to
// encode as JSON.
func (f *fixture) do(method, path, contentType string, body any) response {
	f.t.Helper()
	return f.doAccept(method, path, contentType, "", body)
}

// doAccept is do with an Accept header (none when accept is "").
func (f *fixture) doAccept(method, path, contentType, accept string, body any) response {
	f.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	case []byte:
		r = bytes.NewReader(b)
	default:
		enc, err := json.Marshal(b)
		require.NoError(f.t, err)
		r = bytes.NewReader(enc)
	}
	timeout := f.timeout
	if timeout == 0 {
		timeout = 30 * time.Second
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, f.ts.URL+path, r)
	require.NoError(f.t, err)
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := f.client.Do(req)
	require.NoError(f.t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(f.t, err)
	return response{code: resp.StatusCode, header: resp.Header, body: data}
}

// object decodes the body as an unstructured object.
func (r response) object(tb testing.TB) *unstructured.Unstructured {
	tb.Helper()
	u := &unstructured.Unstructured{}
	require.NoError(tb, u.UnmarshalJSON(r.body), string(r.body))
	return u
}

// list decodes the body as an unstructured list.
func (r response) list(tb testing.TB) *unstructured.UnstructuredList {
	tb.Helper()
	l := &unstructured.UnstructuredList{}
	require.NoError(tb, l.UnmarshalJSON(r.body), string(r.body))
	return l
}

// status decodes the body as a Status and checks code and reason.
func (r response) status(tb testing.TB, code int, reason metav1.StatusReason) metav1.Status {
	tb.Helper()
	require.Equal(tb, code, r.code, string(r.body))
	var st metav1.Status
	require.NoError(tb, json.Unmarshal(r.body, &st), string(r.body))
	require.Equal(tb, "Status", st.Kind)
	require.Equal(tb, "v1", st.APIVersion)
	require.Equal(tb, int32(code), st.Code)
	require.Equal(tb, reason, st.Reason, st.Message)
	require.Equal(tb, metav1.StatusFailure, st.Status)
	return st
}

// testWidget returns a widget body.
func testWidget(ns, name string, labels map[string]string, node string) map[string]any {
	u := widget.NewUnstructuredWidget(ns, name, labels)
	if node != "" {
		u.Object["spec"] = map[string]any{"nodeName": node}
	}
	return u.Object
}

// create creates a widget and returns the stored object.
func (f *fixture) create(ns, name string, labels map[string]string, node string) *unstructured.Unstructured {
	f.t.Helper()
	r := f.do(http.MethodPost, apiBase+"/namespaces/"+ns+"/widgets", "application/json", testWidget(ns, name, labels, node))
	require.Equal(f.t, http.StatusCreated, r.code, string(r.body))
	return r.object(f.t)
}
