package server

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/server/wire"
)

// wireEvent is one decoded frame of a watch stream.
type wireEvent struct {
	Type   string          `json:"type"`
	Object json.RawMessage `json:"object"`
}

func (e wireEvent) object(tb testing.TB) *unstructured.Unstructured {
	tb.Helper()
	u := &unstructured.Unstructured{}
	require.NoError(tb, u.UnmarshalJSON(e.Object), string(e.Object))
	return u
}

func (e wireEvent) status(tb testing.TB) metav1.Status {
	tb.Helper()
	var st metav1.Status
	require.NoError(tb, json.Unmarshal(e.Object, &st))
	return st
}

// stream is an open watch decoded by a goroutine into events.
type stream struct {
	t      testing.TB
	events chan wireEvent
	cancel context.CancelFunc
	done   chan struct{}
}

// watch opens url (a path with query) and checks the 200 stream headers.
func (f *fixture) watch(path string) *stream {
	f.t.Helper()
	return openStream(f.t, f.client, f.ts.URL+path)
}

func openStream(tb testing.TB, client *http.Client, url string) *stream {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	require.NoError(tb, err)
	resp, err := client.Do(req)
	require.NoError(tb, err)
	require.Equal(tb, http.StatusOK, resp.StatusCode)
	require.Equal(tb, "application/json", resp.Header.Get("Content-Type"))
	s := &stream{t: tb, events: make(chan wireEvent, 1000), cancel: cancel, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		defer close(s.events)
		defer resp.Body.Close()
		dec := json.NewDecoder(resp.Body)
		for {
			var e wireEvent
			if dec.Decode(&e) != nil {
				return
			}
			s.events <- e
		}
	}()
	tb.Cleanup(s.stop)
	return s
}

func (s *stream) stop() {
	s.cancel()
	<-s.done
}

// next returns the next event, failing after 10 s or at the end.
func (s *stream) next() wireEvent {
	s.t.Helper()
	select {
	case e, ok := <-s.events:
		require.True(s.t, ok, "watch stream ended")
		return e
	case <-time.After(10 * time.Second):
		s.t.Fatal("no watch event within 10s")
	}
	return wireEvent{}
}

// expectEnd waits for the stream to end with no further event.
func (s *stream) expectEnd(within time.Duration) {
	s.t.Helper()
	select {
	case e, ok := <-s.events:
		require.False(s.t, ok, "unexpected event %s %s", e.Type, e.Object)
	case <-time.After(within):
		s.t.Fatalf("watch stream still open after %v", within)
	}
}

// expectQuiet checks that no event arrives for d.
func (s *stream) expectQuiet(d time.Duration) {
	s.t.Helper()
	select {
	case e, ok := <-s.events:
		s.t.Fatalf("unexpected event (open=%v) %s %s", ok, e.Type, e.Object)
	case <-time.After(d):
	}
}

func rvOf(tb testing.TB, u *unstructured.Unstructured) int64 {
	tb.Helper()
	n, err := strconv.ParseInt(u.GetResourceVersion(), 10, 64)
	require.NoError(tb, err)
	return n
}

func TestWatchEventsAndResume(t *testing.T) {
	f := newFixture(t)
	f.create("ns", "w1", nil, "")
	list := f.do(http.MethodGet, apiBase+"/namespaces/ns/widgets", "", nil).list(t)
	w := f.watch(apiBase + "/namespaces/ns/widgets?watch=true&resourceVersion=" + list.GetResourceVersion())

	f.create("ns", "w2", nil, "")
	f.do(http.MethodPatch, apiBase+"/namespaces/ns/widgets/w2", wire.MediaMergePatch, `{"spec":{"replicas":3}}`)
	f.do(http.MethodDelete, apiBase+"/namespaces/ns/widgets/w1", "", nil)
	want := []struct{ typ, name string }{{"ADDED", "w2"}, {"MODIFIED", "w2"}, {"DELETED", "w1"}}
	var rvs []string
	last := int64(0)
	for _, wv := range want {
		e := w.next()
		o := e.object(t)
		require.Equal(t, wv.typ, e.Type)
		require.Equal(t, wv.name, o.GetName())
		require.Equal(t, "Widget", o.GetKind())
		require.Greater(t, rvOf(t, o), last)
		last = rvOf(t, o)
		rvs = append(rvs, o.GetResourceVersion())
	}
	w.stop()

	// Resume after the first event: exactly the two later ones.
	r := f.watch(apiBase + "/namespaces/ns/widgets?watch=1&resourceVersion=" + rvs[0])
	for i, wv := range want[1:] {
		e := r.next()
		require.Equal(t, wv.typ, e.Type)
		require.Equal(t, rvs[i+1], e.object(t).GetResourceVersion())
	}
	r.expectQuiet(200 * time.Millisecond)
}

func TestWatchSelectorsAndSingleObject(t *testing.T) {
	f := newFixture(t)
	rv := f.create("ns", "seed", nil, "").GetResourceVersion()
	sel := f.watch(apiBase + "/namespaces/ns/widgets?watch=true&labelSelector=app%3Dx&resourceVersion=" + rv)
	one := f.watch(apiBase + "/namespaces/ns/widgets/b?watch=true&resourceVersion=" + rv)
	// The name is a value, never parsed as a selector.
	odd := f.watch(apiBase + "/namespaces/ns/widgets/b,metadata.name!=x?watch=true&resourceVersion=" + rv)
	all := f.watch(apiBase + "/widgets?watch=true&fieldSelector=spec.nodeName%3Dn1&resourceVersion=" + rv)
	f.create("ns", "a", map[string]string{"app": "y"}, "n1")
	f.create("ns", "b", map[string]string{"app": "x"}, "")
	f.create("other", "c", map[string]string{"app": "x"}, "n1")

	require.Equal(t, "b", sel.next().object(t).GetName())
	require.Equal(t, "b", one.next().object(t).GetName())
	require.Equal(t, "a", all.next().object(t).GetName())
	require.Equal(t, "c", all.next().object(t).GetName())
	sel.expectQuiet(100 * time.Millisecond)
	one.expectQuiet(10 * time.Millisecond)
	odd.expectQuiet(10 * time.Millisecond)
}

func TestWatchTooOldResourceVersion(t *testing.T) {
	f := newFixture(t)
	first := f.create("ns", "a", nil, "")
	last := f.create("ns", "b", nil, "")
	require.NoError(t, etcdServer.Compact(testCtx(t), rvOf(t, last)))

	w := f.watch(apiBase + "/namespaces/ns/widgets?watch=true&resourceVersion=" + strconv.FormatInt(rvOf(t, first)-1, 10))
	e := w.next()
	require.Equal(t, "ERROR", e.Type)
	st := e.status(t)
	require.Equal(t, "Status", st.Kind)
	require.Equal(t, int32(http.StatusGone), st.Code)
	require.Equal(t, metav1.StatusReasonExpired, st.Reason)
	w.expectEnd(5 * time.Second)
}

func TestWatchInitialEventsAndBookmark(t *testing.T) {
	f := newFixture(t)
	f.create("ns", "a", nil, "")
	last := f.create("ns", "b", nil, "")
	w := f.watch(apiBase + "/namespaces/ns/widgets?watch=true&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan")
	got := map[string]bool{}
	for range 2 {
		e := w.next()
		require.Equal(t, "ADDED", e.Type)
		got[e.object(t).GetName()] = true
	}
	require.Equal(t, map[string]bool{"a": true, "b": true}, got)
	e := w.next()
	require.Equal(t, "BOOKMARK", e.Type)
	bm := e.object(t)
	require.Equal(t, "Widget", bm.GetKind())
	require.Equal(t, "demo.listwatch.dev/v1", bm.GetAPIVersion())
	require.Equal(t, "true", bm.GetAnnotations()[metav1.InitialEventsAnnotationKey])
	require.GreaterOrEqual(t, rvOf(t, bm), rvOf(t, last))
	f.create("ns", "c", nil, "")
	e = w.next()
	require.Equal(t, "ADDED", e.Type)
	require.Equal(t, "c", e.object(t).GetName())
}

func TestWatchTimeoutSeconds(t *testing.T) {
	f := newFixture(t)
	start := time.Now()
	w := f.watch(apiBase + "/namespaces/ns/widgets?watch=true&timeoutSeconds=1")
	w.expectEnd(10 * time.Second)
	require.GreaterOrEqual(t, time.Since(start), 900*time.Millisecond)
}

func TestCloseEndsWatches(t *testing.T) {
	f := newFixture(t)
	var ws []*stream
	for range 3 {
		ws = append(ws, f.watch(apiBase+"/widgets?watch=true"))
	}
	f.srv.Close()
	for _, w := range ws {
		w.expectEnd(5 * time.Second)
	}
	f.do(http.MethodGet, apiBase+"/widgets?watch=true", "", nil).
		status(t, http.StatusServiceUnavailable, metav1.StatusReasonServiceUnavailable)
	// Other requests are still served until the listener closes.
	require.Equal(t, http.StatusOK, f.do(http.MethodGet, apiBase+"/widgets", "", nil).code)
}

func TestServeShutsDownGracefully(t *testing.T) {
	st := newStore(t, "/widgets")
	srv, err := New(Config{Resources: []Resource{widgets(st)}})
	require.NoError(t, err)
	l, err := Listen("127.0.0.1:0")
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1", l.Addr().(*net.TCPAddr).IP.String())
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, l) }()

	client := &http.Client{Transport: &http.Transport{}}
	defer client.CloseIdleConnections()
	w := openStream(t, client, "http://"+l.Addr().String()+apiBase+"/widgets?watch=true")
	cancel()
	w.expectEnd(5 * time.Second)
	select {
	case err := <-served:
		require.NoError(t, err)
	case <-time.After(15 * time.Second):
		t.Fatal("Serve did not return after its context ended")
	}
	_, err = net.DialTimeout("tcp", l.Addr().String(), time.Second)
	require.Error(t, err, "listener still open")
}

func TestListenDefaultsToLoopback(t *testing.T) {
	l, err := Listen(":0")
	require.NoError(t, err)
	defer l.Close()
	require.True(t, l.Addr().(*net.TCPAddr).IP.IsLoopback())
}

// TestSlowWatcherTimeoutEndsStalledWatch: over HTTP, a watch whose client
// stops reading is ended once it has taken nothing for SlowWatcherTimeout
// (WriteTimeout, a minute, plays no part), counted in
// listwatch_server_slow_watchers_ended_total, while a client that keeps reading
// receives every event and stays open.
func TestSlowWatcherTimeoutEndsStalledWatch(t *testing.T) {
	const slow = 400 * time.Millisecond
	reg := prometheus.NewRegistry()
	f := newFixture(t, func(c *Config) {
		c.SlowWatcherTimeout = slow
		c.WriteTimeout = time.Minute
		c.Metrics = reg
	})
	reader := f.watch(apiBase + "/namespaces/ns/widgets?watch=true")
	require.Eventually(t, func() bool { return f.srv.activeWatches.Load() == 1 }, 10*time.Second, 5*time.Millisecond)
	conn, err := net.Dial("tcp", f.ts.Listener.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.Write([]byte("GET " + apiBase + "/namespaces/ns/widgets?watch=true HTTP/1.1\r\nHost: x\r\n\r\n"))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return f.srv.activeWatches.Load() == 2 }, 10*time.Second, 5*time.Millisecond)

	ctx := testCtx(t)
	pad := strings.Repeat("x", 200<<10)
	received := 0
	created := 0
	start := time.Now()
	for ; f.srv.activeWatches.Load() == 2; created++ {
		require.Less(t, created, 200, "the stalled watch was never ended")
		u := widget.NewUnstructuredWidget("ns", fmt.Sprintf("big-%d", created), nil)
		u.Object["spec"] = map[string]any{"data": pad}
		require.NoError(t, f.widgets.Create(ctx, "/widgets/ns/"+u.GetName(), u, nil, 0))
		require.Equal(t, u.GetName(), reader.next().object(t).GetName(), "the reading client lags")
		received++
		if created > 20 {
			// The sockets are full by now: give the stall time to be noticed
			// rather than filling etcd.
			time.Sleep(slow / 4) // pacing the writer, not synchronisation
		}
	}
	require.GreaterOrEqual(t, time.Since(start), slow*9/10, "ended before its client could have taken nothing for SlowWatcherTimeout")
	metrics := string(f.do(http.MethodGet, "/metrics", "", nil).body)
	require.Contains(t, metrics, `listwatch_server_slow_watchers_ended_total{resource="widgets"} 1`)
	// The reading client is unaffected: still open, still receiving.
	require.Equal(t, int64(1), f.srv.activeWatches.Load())
	u := widget.NewUnstructuredWidget("ns", "after", nil)
	require.NoError(t, f.widgets.Create(ctx, "/widgets/ns/after", u, nil, 0))
	require.Equal(t, "after", reader.next().object(t).GetName())
	t.Logf("stalled watch ended after %d events; the reader received %d", created, received)
}

// TestStalledListClientIsCutOff: a client that stops reading a large list
// is disconnected after WriteTimeout instead of holding the handler.
func TestStalledListClientIsCutOff(t *testing.T) {
	st := newStore(t, "/widgets")
	ctx := testCtx(t)
	pad := strings.Repeat("x", 200<<10)
	for i := range 40 { // 8 MB, more than loopback socket buffers hold
		u := widget.NewUnstructuredWidget("ns", fmt.Sprintf("big-%d", i), nil)
		u.Object["spec"] = map[string]any{"data": pad}
		require.NoError(t, st.Create(ctx, "/widgets/ns/"+u.GetName(), u, nil, 0))
	}
	srv, err := New(Config{Resources: []Resource{widgets(st)}, WriteTimeout: 300 * time.Millisecond})
	require.NoError(t, err)
	closed := make(chan struct{}, 1)
	ts := httptest.NewUnstartedServer(srv)
	ts.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateClosed {
			closed <- struct{}{}
		}
	}
	ts.Start()
	defer ts.Close()
	conn, err := net.Dial("tcp", ts.Listener.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.Write([]byte("GET " + apiBase + "/namespaces/ns/widgets HTTP/1.1\r\nHost: x\r\n\r\n"))
	require.NoError(t, err)
	select {
	case <-closed:
	case <-time.After(20 * time.Second):
		t.Fatal("the server kept a stalled list connection open")
	}
}
