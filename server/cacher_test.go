package server

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage/etcd3"
)

// newCacherFixture serves widgets from a cacher over an etcd3 store, as
// production does. The cacher runs until the test ends.
func newCacherFixture(tb testing.TB, edit ...func(*Config)) (*fixture, *cacher.Cacher) {
	tb.Helper()
	return newCacherFixtureWith(tb, cacher.Config{}, edit...)
}

// newCacherFixtureWith is newCacherFixture with cacher settings (Storage,
// prefix and types are filled in).
func newCacherFixtureWith(tb testing.TB, cc cacher.Config, edit ...func(*Config)) (*fixture, *cacher.Cacher) {
	tb.Helper()
	c, st := newCacher(tb, cc)
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		_ = c.Run(ctx)
	}()
	tb.Cleanup(func() {
		cancel()
		<-ran
	})
	require.NoError(tb, c.WaitReady(testCtx(tb)))
	f := newFixture(tb, append([]func(*Config){func(cfg *Config) { cfg.Resources[0].Storage = c }}, edit...)...)
	f.widgets = st
	return f, c
}

// newCacher returns a cacher (not running) over an etcd3 store on its own
// etcd client: etcd answers a progress request only when every watch on a
// client's stream is synced, and the cacher's consistent reads wait for
// that answer, so it must not share a stream with other tests' watches.
func newCacher(tb testing.TB, cc ...cacher.Config) (*cacher.Cacher, *etcd3.Store) {
	tb.Helper()
	cleanPrefix(tb)
	cli, err := embedtest.NewClient(etcdServer.Endpoints)
	require.NoError(tb, err)
	tb.Cleanup(func() { cli.Close() })
	st, err := etcd3.New(etcd3.Config{
		Client: cli, Codec: widget.UnstructuredCodec,
		NewFunc: widget.NewUnstructured, NewListFunc: widget.NewUnstructuredList,
		Prefix: embedtest.Prefix(tb), ResourcePrefix: "/widgets",
	})
	require.NoError(tb, err)
	tb.Cleanup(st.Close)
	var cfg cacher.Config
	if len(cc) > 0 {
		cfg = cc[0]
	}
	cfg.Storage, cfg.ResourcePrefix, cfg.GetAttrs = st, "/widgets", widget.GetAttrs
	cfg.NewFunc, cfg.NewListFunc = widget.NewUnstructured, widget.NewUnstructuredList
	c, err := cacher.New(cfg)
	require.NoError(tb, err)
	return c, st
}

// TestCacherWatchersShareEncodings: every HTTP watcher of the cacher gets
// the bytes encoded once per event.
func TestCacherWatchersShareEncodings(t *testing.T) {
	noGC(t)
	f, _ := newCacherFixture(t)
	rv := f.create("ns", "seed", nil, "").GetResourceVersion()
	var ws []*stream
	for range 5 {
		ws = append(ws, f.watch(apiBase+"/namespaces/ns/widgets?watch=true&resourceVersion="+rv))
	}
	before := f.srv.enc.Encodes.Load()
	const events = 10
	for i := range events {
		f.create("ns", fmt.Sprintf("w%d", i), nil, "")
	}
	for _, w := range ws {
		for i := range events {
			e := w.next()
			require.Equal(t, "ADDED", e.Type)
			require.Equal(t, fmt.Sprintf("w%d", i), e.object(t).GetName())
		}
	}
	require.Equal(t, int64(events), f.srv.enc.Encodes.Load()-before)
}

// TestCacherWatchResumeAnd410: resume from the cache's history, and 410
// for a revision older than the cache that etcd has compacted.
func TestCacherWatchResumeAnd410(t *testing.T) {
	// One write before the cacher starts, so its revision is older than
	// anything the cache holds.
	cleanPrefix(t)
	pre, err := etcdServer.Client.Put(testCtx(t), embedtest.Prefix(t)+"widgets/ns/pre",
		`{"apiVersion":"demo.listwatch.dev/v1","kind":"Widget","metadata":{"name":"pre","namespace":"ns"}}`)
	require.NoError(t, err)
	f, _ := newCacherFixture(t)
	first := f.create("ns", "a", nil, "")
	b := f.create("ns", "b", nil, "")
	f.do(http.MethodDelete, apiBase+"/namespaces/ns/widgets/a", "", nil)
	w := f.watch(apiBase + "/namespaces/ns/widgets?watch=true&resourceVersion=" + first.GetResourceVersion())
	e := w.next()
	require.Equal(t, "ADDED", e.Type)
	require.Equal(t, b.GetResourceVersion(), e.object(t).GetResourceVersion())
	e = w.next()
	require.Equal(t, "DELETED", e.Type)
	require.Equal(t, "a", e.object(t).GetName())

	bm := f.watch(apiBase + "/namespaces/ns/widgets?watch=true&allowWatchBookmarks=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan")
	names := map[string]bool{}
	for range 2 {
		ev := bm.next()
		require.Equal(t, "ADDED", ev.Type)
		names[ev.object(t).GetName()] = true
	}
	require.Equal(t, map[string]bool{"pre": true, "b": true}, names)
	ev := bm.next()
	require.Equal(t, "BOOKMARK", ev.Type)
	require.Equal(t, "true", ev.object(t).GetAnnotations()[metav1.InitialEventsAnnotationKey])

	require.NoError(t, etcdServer.Compact(testCtx(t), rvOf(t, first)))
	gone := f.watch(apiBase + "/namespaces/ns/widgets?watch=true&resourceVersion=" + strconv.FormatInt(pre.Header.Revision-1, 10))
	e = gone.next()
	require.Equal(t, "ERROR", e.Type, string(e.Object))
	st := e.status(t)
	require.Equal(t, int32(http.StatusGone), st.Code)
	require.Equal(t, metav1.StatusReasonExpired, st.Reason)
	gone.expectEnd(5 * time.Second)
}

// TestCacherNotReadyIs429: before its first list the cacher is not ready.
func TestCacherNotReadyIs429(t *testing.T) {
	c, _ := newCacher(t)
	f := newFixture(t, func(cfg *Config) { cfg.Resources[0].Storage = c })
	for _, q := range []string{"", "?watch=true", "?resourceVersion=0"} {
		r := f.do(http.MethodGet, apiBase+"/namespaces/ns/widgets"+q, "", nil)
		r.status(t, http.StatusTooManyRequests, metav1.StatusReasonTooManyRequests)
		require.NotEmpty(t, r.header.Get("Retry-After"))
	}
}

// TestCacherBookmarksAdvanceIdleWatch: a watcher that sees no events still
// learns, through BOOKMARK events on its stream, that the RV advanced.
func TestCacherBookmarksAdvanceIdleWatch(t *testing.T) {
	f, _ := newCacherFixtureWith(t, cacher.Config{BookmarkInterval: 100 * time.Millisecond})
	start := f.create("busy", "w0", nil, "")
	w := f.watch(apiBase + "/namespaces/quiet/widgets?watch=true&allowWatchBookmarks=true&resourceVersion=" + start.GetResourceVersion())
	last := start
	for i := 1; i <= 3; i++ {
		last = f.create("busy", fmt.Sprintf("w%d", i), nil, "")
	}
	for {
		e := w.next()
		require.Equal(t, "BOOKMARK", e.Type, string(e.Object))
		bm := e.object(t)
		require.Equal(t, "Widget", bm.GetKind())
		if rvOf(t, bm) >= rvOf(t, last) {
			break
		}
	}
}
