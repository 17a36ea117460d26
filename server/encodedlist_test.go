package server

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
)

// TestCacherEncodedListsAsDecoded: a cacher keeping the server's JSON
// (CacheCodec) answers lists with its cached bytes, and every list reads
// byte for byte as it does from a cacher of decoded objects over the same
// store: selectors, pages and continue tokens, RV 0 and exact RVs.
func TestCacherEncodedListsAsDecoded(t *testing.T) {
	f, enc := newCacherFixtureWith(t, cacher.Config{Codec: CacheCodec(widgets(nil))})
	g, dec := decodedTwin(t, f)

	var rv string
	for i := range 7 {
		rv = f.create("ns1", fmt.Sprintf("w%d", i), map[string]string{"app": fmt.Sprintf("a%d", i%2)}, fmt.Sprintf("node-%d", i%3)).GetResourceVersion()
	}
	f.create("ns2", "x", map[string]string{"app": "a0"}, "node-0")
	base := apiBase + "/namespaces/ns1/widgets"
	// Consistent lists wait until both caches hold every write.
	f.do(http.MethodGet, base, "", nil)
	g.do(http.MethodGet, base, "", nil)

	page := f.do(http.MethodGet, base+"?limit=3", "", nil).list(t)
	require.NotEmpty(t, page.GetContinue())
	for _, q := range []string{"", "?resourceVersion=0", "?limit=3", "?limit=3&continue=" + url.QueryEscape(page.GetContinue()),
		"?labelSelector=app%3Da1", "?fieldSelector=spec.nodeName%3Dnode-2", "?limit=2&labelSelector=app%3Da0",
		"?resourceVersion=" + rv + "&resourceVersionMatch=Exact", "?resourceVersion=" + rv + "&resourceVersionMatch=NotOlderThan"} {
		a, b := f.do(http.MethodGet, base+q, "", nil), g.do(http.MethodGet, base+q, "", nil)
		require.Equal(t, http.StatusOK, a.code, "%s: %s", q, a.body)
		require.Equal(t, string(b.body), string(a.body), q)
		require.Equal(t, b.header.Get("Content-Type"), a.header.Get("Content-Type"), q)
	}
	all := apiBase + "/widgets"
	require.Equal(t, string(g.do(http.MethodGet, all, "", nil).body), string(f.do(http.MethodGet, all, "", nil).body))

	// The lists above took the encoded path: the cacher hands out its bytes.
	list, ok, err := enc.GetListEncoded(testCtx(t), "/widgets/ns1", storage.ListOptions{Recursive: true, Predicate: storage.Everything})
	require.NoError(t, err)
	require.True(t, ok)
	require.Len(t, list.Items, 7)
	_, ok, _ = dec.GetListEncoded(testCtx(t), "/widgets/ns1", storage.ListOptions{Recursive: true, Predicate: storage.Everything})
	require.False(t, ok, "a cacher of decoded objects has no encodings to hand out")
}

// decodedTwin returns a server over a cacher of decoded objects over f's
// etcd store.
func decodedTwin(t *testing.T, f *fixture) (*fixture, *cacher.Cacher) {
	t.Helper()
	dec, err := cacher.New(cacher.Config{Storage: f.widgets, ResourcePrefix: "/widgets", GetAttrs: widget.GetAttrs,
		NewFunc: widget.NewUnstructured, NewListFunc: widget.NewUnstructuredList})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan struct{})
	go func() { defer close(ran); _ = dec.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-ran })
	require.NoError(t, dec.WaitReady(testCtx(t)))
	return newFixture(t, func(cfg *Config) { cfg.Resources[0].Storage = dec }), dec
}

// TestCacherEncodedWatchAsDecoded: HTTP watches of a cacher keeping the
// server's JSON (their lines built from the cached bytes) read byte for
// byte as those of a cacher of decoded objects: initial events, then
// ADDED, MODIFIED and DELETED.
func TestCacherEncodedWatchAsDecoded(t *testing.T) {
	noGC(t)
	f, _ := newCacherFixtureWith(t, cacher.Config{Codec: CacheCodec(widgets(nil))})
	g, _ := decodedTwin(t, f)
	base := apiBase + "/namespaces/ns1/widgets"
	rv := f.create("ns1", "a", map[string]string{"app": "x"}, "node-1").GetResourceVersion()
	f.create("ns1", "b", nil, "")
	// Consistent lists wait until both caches hold every write.
	f.do(http.MethodGet, base, "", nil)
	g.do(http.MethodGet, base, "", nil)

	query := []string{"?watch=true&resourceVersion=0", "?watch=true&resourceVersion=" + rv}
	var fs, gs []*stream
	for _, q := range query {
		fs, gs = append(fs, f.watch(base+q)), append(gs, g.watch(base+q))
	}
	same := func(i int, types ...string) {
		t.Helper()
		for j, typ := range types {
			a, b := fs[i].next(), gs[i].next()
			require.Equal(t, typ, a.Type, "%s event %d", query[i], j)
			require.Equal(t, b.Type, a.Type, "%s event %d", query[i], j)
			require.Equal(t, string(b.Object), string(a.Object), "%s event %d", query[i], j)
		}
	}
	same(0, "ADDED", "ADDED") // the initial state
	same(1, "ADDED")          // b, after a's RV
	encodes := f.srv.enc.Encodes.Load()
	f.create("ns1", "c", nil, "")
	r := f.do(http.MethodPatch, base+"/a", "application/merge-patch+json", `{"metadata":{"labels":{"app":"y"}}}`)
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	r = f.do(http.MethodDelete, base+"/b", "", nil)
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	for i := range query {
		same(i, "ADDED", "MODIFIED", "DELETED")
	}
	// The live events went through the encodings both watchers share: one
	// line each.
	require.Equal(t, int64(3), f.srv.enc.Encodes.Load()-encodes)
}

// encodingsStore answers lists with fixed encodings in a named format, and
// everything else through the storage it wraps.
type encodingsStore struct {
	storage.Interface
	format string
}

func (s *encodingsStore) EncodedFormat() string { return s.format }

func (s *encodingsStore) GetListEncoded(context.Context, string, storage.ListOptions) (storage.EncodedList, bool, error) {
	item := []byte(`{"apiVersion":"demo.listwatch.dev/v1","kind":"Widget","metadata":{"name":"from-encodings","namespace":"ns1"}}`)
	return storage.EncodedList{Items: [][]byte{item}, ResourceVersion: 7}, true, nil
}

// TestEncodedListOnlyInTheServersFormat: a store's encodings are written
// as the list only when their format is the one the server writes for the
// resource (CacheCodec's); otherwise the list goes through GetList.
func TestEncodedListOnlyInTheServersFormat(t *testing.T) {
	for _, tc := range []struct {
		format string
		want   string
	}{
		{CacheCodec(widgets(nil)).Format(), "from-encodings"},
		{CacheCodec(gadgets(nil)).Format(), "stored"},
		{"", "stored"},
	} {
		t.Run(tc.want+"/"+tc.format, func(t *testing.T) {
			f := newFixture(t, func(cfg *Config) {
				cfg.Resources[0].Storage = &encodingsStore{Interface: cfg.Resources[0].Storage, format: tc.format}
			})
			f.create("ns1", "stored", nil, "")
			items := f.do(http.MethodGet, apiBase+"/namespaces/ns1/widgets", "", nil).list(t).Items
			require.Len(t, items, 1)
			require.Equal(t, tc.want, items[0].GetName())
		})
	}
}

// noGC turns the garbage collector off for the rest of the test: the
// watchers of a change share its encodings while one of them holds them
// (the cache points at them weakly), so a test counting encodings must not
// depend on when a collection runs.
func noGC(t *testing.T) {
	old := debug.SetGCPercent(-1)
	t.Cleanup(func() { debug.SetGCPercent(old) })
}
