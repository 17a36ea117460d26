package httplw

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
)

func TestListPagesAndSelectors(t *testing.T) {
	f := newFixture(t)
	for i := range 5 {
		f.put("ns", fmt.Sprintf("w%d", i), map[string]string{"app": fmt.Sprintf("a%d", i%2)})
	}
	f.put("other", "x", nil)
	lw := f.lw("ns")
	ctx := testCtx(t)

	var names []string
	opts := metav1.ListOptions{Limit: 2}
	var rv string
	for {
		obj, err := lw.List(ctx, opts)
		require.NoError(t, err)
		l := obj.(*unstructured.UnstructuredList)
		if rv == "" {
			rv = l.GetResourceVersion()
		}
		require.Equal(t, rv, l.GetResourceVersion())
		for _, it := range l.Items {
			names = append(names, it.GetName())
		}
		if opts.Continue = l.GetContinue(); opts.Continue == "" {
			break
		}
	}
	require.Equal(t, []string{"w0", "w1", "w2", "w3", "w4"}, names)

	obj, err := lw.List(ctx, metav1.ListOptions{LabelSelector: "app=a1"})
	require.NoError(t, err)
	items, err := meta.ExtractList(obj)
	require.NoError(t, err)
	require.Len(t, items, 2)

	all, err := f.lw("").List(ctx, metav1.ListOptions{ResourceVersion: "0", FieldSelector: "metadata.namespace=other"})
	require.NoError(t, err)
	require.Len(t, all.(*unstructured.UnstructuredList).Items, 1)
}

func TestTypedDecoding(t *testing.T) {
	f := newFixture(t)
	first := f.put("ns", "a", nil)
	lw := f.lw("ns", func(c *Config) {
		c.NewFunc, c.NewListFunc = widget.New, widget.NewList
	})
	ctx := testCtx(t)
	obj, err := lw.List(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	l := obj.(*widget.WidgetList)
	require.Len(t, l.Items, 1)
	require.Equal(t, "a", l.Items[0].Name)

	w, err := lw.Watch(ctx, metav1.ListOptions{ResourceVersion: first.GetResourceVersion()})
	require.NoError(t, err)
	defer w.Stop()
	f.put("ns", "b", nil)
	ev := next(t, w)
	require.Equal(t, watch.Added, ev.Type)
	require.Equal(t, "b", ev.Object.(*widget.Widget).Name)
}

func next(tb testing.TB, w watch.Interface) watch.Event {
	tb.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		require.True(tb, ok, "watch ended")
		return ev
	case <-time.After(10 * time.Second):
		tb.Fatal("no event within 10s")
	}
	return watch.Event{}
}

func expectClosed(tb testing.TB, w watch.Interface, within time.Duration) {
	tb.Helper()
	select {
	case ev, ok := <-w.ResultChan():
		require.False(tb, ok, "unexpected event %v", ev)
	case <-time.After(within):
		tb.Fatalf("watch still open after %v", within)
	}
}

func TestWatchEventsBookmarksAndResume(t *testing.T) {
	f := newFixture(t)
	start := f.put("ns", "seed", nil)
	lw := f.lw("ns")
	ctx := testCtx(t)
	w, err := lw.Watch(ctx, metav1.ListOptions{ResourceVersion: start.GetResourceVersion(), LabelSelector: "app=x"})
	require.NoError(t, err)
	f.put("ns", "a", map[string]string{"app": "x"})
	f.put("ns", "b", map[string]string{"app": "y"})
	f.put("ns", "a", map[string]string{"app": "x", "v": "2"})
	ev := next(t, w)
	require.Equal(t, watch.Added, ev.Type)
	firstRV := ev.Object.(*unstructured.Unstructured).GetResourceVersion()
	ev = next(t, w)
	require.Equal(t, watch.Modified, ev.Type)
	require.Equal(t, "2", ev.Object.(*unstructured.Unstructured).GetLabels()["v"])
	w.Stop()
	w.Stop() // idempotent
	expectClosed(t, w, time.Second)

	// Resume from the first event's RV: only the update.
	w2, err := lw.Watch(ctx, metav1.ListOptions{ResourceVersion: firstRV, LabelSelector: "app=x"})
	require.NoError(t, err)
	defer w2.Stop()
	ev = next(t, w2)
	require.Equal(t, watch.Modified, ev.Type)

	// Initial events end with the annotated bookmark.
	yes := true
	w3, err := lw.Watch(ctx, metav1.ListOptions{SendInitialEvents: &yes, AllowWatchBookmarks: true,
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan})
	require.NoError(t, err)
	defer w3.Stop()
	for range 3 {
		require.Equal(t, watch.Added, next(t, w3).Type)
	}
	ev = next(t, w3)
	require.Equal(t, watch.Bookmark, ev.Type)
	require.Equal(t, "true", ev.Object.(*unstructured.Unstructured).GetAnnotations()[metav1.InitialEventsAnnotationKey])
}

func TestWatchTooOldIsErrorEvent(t *testing.T) {
	f := newFixture(t)
	first := f.put("ns", "a", nil)
	last := f.put("ns", "b", nil)
	rv, _ := strconv.ParseInt(last.GetResourceVersion(), 10, 64)
	require.NoError(t, etcdServer.Compact(testCtx(t), rv))
	lw := f.lw("ns")
	old, _ := strconv.ParseInt(first.GetResourceVersion(), 10, 64)

	w, err := lw.Watch(testCtx(t), metav1.ListOptions{ResourceVersion: strconv.FormatInt(old-1, 10)})
	require.NoError(t, err)
	defer w.Stop()
	ev := next(t, w)
	require.Equal(t, watch.Error, ev.Type)
	st, ok := ev.Object.(*metav1.Status)
	require.True(t, ok, "%T", ev.Object)
	require.True(t, apierrors.IsResourceExpired(apierrors.FromObject(st)))
	// The event's Status is a typed storage error again on this side.
	require.ErrorIs(t, storage.FromStatus(st), storage.ErrGone)
	expectClosed(t, w, 5*time.Second)

	_, err = lw.List(testCtx(t), metav1.ListOptions{ResourceVersion: first.GetResourceVersion(),
		ResourceVersionMatch: metav1.ResourceVersionMatchExact})
	require.True(t, apierrors.IsResourceExpired(err), "%v", err)
	require.ErrorIs(t, err, storage.ErrGone)
	var se *storage.Error
	require.ErrorAs(t, err, &se)
}

func TestStatusErrors(t *testing.T) {
	f := newFixture(t)
	ctx := testCtx(t)
	_, err := f.lw("ns").List(ctx, metav1.ListOptions{LabelSelector: "a in ("})
	require.True(t, apierrors.IsBadRequest(err), "%v", err)
	_, err = f.lw("ns").Watch(ctx, metav1.ListOptions{FieldSelector: "spec.color=red"})
	require.True(t, apierrors.IsBadRequest(err), "%v", err)
	gone, err := New(Config{BaseURL: f.ts.URL, Group: "demo.listwatch.dev", Version: "v1", Plural: "gizmos", HTTPClient: f.client})
	require.NoError(t, err)
	_, err = gone.List(ctx, metav1.ListOptions{})
	require.True(t, apierrors.IsNotFound(err), "%v", err)
	require.ErrorIs(t, err, storage.ErrNotFound)

	// Not ready: 429 with Retry-After 1; a list whose deadline is nearer
	// gets its 429 at once instead of being sent again.
	nr := newFixture(t, func(s storage.Interface) storage.Interface { return notReady{s} })
	short, cancel := context.WithTimeout(ctx, 999*time.Millisecond)
	defer cancel()
	_, err = nr.lw("ns").List(short, metav1.ListOptions{})
	require.True(t, apierrors.IsTooManyRequests(err), "%v", err)
	require.ErrorIs(t, err, storage.ErrNotReady)
	_, err = nr.lw("ns").Watch(ctx, metav1.ListOptions{})
	require.True(t, apierrors.IsTooManyRequests(err), "%v", err)
	require.ErrorIs(t, err, storage.ErrNotReady)

	// A non-Status error body still gives an error with the HTTP code.
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "nope", http.StatusServiceUnavailable)
	}))
	defer plain.Close()
	pl, err := New(Config{BaseURL: plain.URL, Group: "g.io", Version: "v1", Plural: "xs", HTTPClient: f.client})
	require.NoError(t, err)
	_, err = pl.List(ctx, metav1.ListOptions{})
	require.True(t, apierrors.IsServiceUnavailable(err), "%v", err)
	require.ErrorIs(t, err, storage.ErrUnavailable)
}

type notReady struct{ storage.Interface }

func (notReady) ReadinessCheck() error {
	return &storage.Error{Code: storage.CodeNotReady, RetryAfterSeconds: 1}
}

func TestWatchEndsOnContextServerTimeoutAndGarbage(t *testing.T) {
	f := newFixture(t)
	lw := f.lw("ns")

	ctx, cancel := context.WithCancel(context.Background())
	w, err := lw.Watch(ctx, metav1.ListOptions{})
	require.NoError(t, err)
	cancel()
	expectClosed(t, w, 5*time.Second)
	w.Stop()

	secs := int64(1)
	w, err = lw.Watch(testCtx(t), metav1.ListOptions{TimeoutSeconds: &secs})
	require.NoError(t, err)
	expectClosed(t, w, 10*time.Second)

	garbage := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"type":"ADDED","object":{"kind":"Widget","apiVersion":"v1","metadata":{"name":"a"}}}`+"\n{oops")
	}))
	defer garbage.Close()
	gl, err := New(Config{BaseURL: garbage.URL, Group: "g.io", Version: "v1", Plural: "xs", HTTPClient: f.client})
	require.NoError(t, err)
	w, err = gl.Watch(testCtx(t), metav1.ListOptions{})
	require.NoError(t, err)
	defer w.Stop()
	require.Equal(t, watch.Added, next(t, w).Type)
	ev := next(t, w)
	require.Equal(t, watch.Error, ev.Type)
	require.Equal(t, int32(http.StatusInternalServerError), ev.Object.(*metav1.Status).Code)
	expectClosed(t, w, time.Second)
}

func TestEncodeListOptions(t *testing.T) {
	yes, secs := true, int64(30)
	cases := []struct {
		name string
		opts metav1.ListOptions
		want string
	}{
		{"empty", metav1.ListOptions{}, ""},
		{"list", metav1.ListOptions{LabelSelector: "a=b", FieldSelector: "metadata.name=x", ResourceVersion: "10",
			ResourceVersionMatch: metav1.ResourceVersionMatchExact, Limit: 500, Continue: "tok"},
			"continue=tok&fieldSelector=metadata.name%3Dx&labelSelector=a%3Db&limit=500&resourceVersion=10&resourceVersionMatch=Exact"},
		{"watch", metav1.ListOptions{Watch: true, AllowWatchBookmarks: true, SendInitialEvents: &yes, TimeoutSeconds: &secs},
			"allowWatchBookmarks=true&sendInitialEvents=true&timeoutSeconds=30&watch=true"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, EncodeListOptions(c.opts).Encode())
			_, err := url.ParseQuery(c.want)
			require.NoError(t, err)
		})
	}
}

func TestNewValidates(t *testing.T) {
	for _, cfg := range []Config{
		{BaseURL: "http://x", Group: "g", Version: "v1"},
		{BaseURL: "not a url", Group: "g", Version: "v1", Plural: "p"},
		{BaseURL: "/relative", Group: "g", Version: "v1", Plural: "p"},
	} {
		_, err := New(cfg)
		require.Error(t, err, "%+v", cfg)
	}
}

// TestCoreGroupPath: Group "" addresses the core group at /api/{version}.
func TestCoreGroupPath(t *testing.T) {
	paths := make(chan string, 1)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		paths <- r.URL.Path
		_, _ = w.Write([]byte(`{"apiVersion":"v1","kind":"NodeList","metadata":{"resourceVersion":"7"},"items":[]}`))
	}))
	defer ts.Close()
	lw, err := New(Config{BaseURL: ts.URL, Version: "v1", Plural: "nodes"})
	require.NoError(t, err)
	obj, err := lw.List(testCtx(t), metav1.ListOptions{})
	require.NoError(t, err)
	require.Equal(t, "/api/v1/nodes", <-paths)
	require.Equal(t, "7", obj.(*unstructured.UnstructuredList).GetResourceVersion())
	_, err = New(Config{BaseURL: ts.URL, Plural: "nodes"})
	require.Error(t, err)
}
