package server

import (
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/cacher"
)

// TestCacherExternalCompaction: etcd compacted by another client (no
// compactor of ours involved) makes watches, exact lists and continue
// tokens below the compaction answer 410 over HTTP at once, both for an
// RV still in the cache's history and for one before it, as every replica
// would; the compaction revision itself is still served.
func TestCacherExternalCompaction(t *testing.T) {
	f, _ := newCacherFixtureWith(t, cacher.Config{HistoryMinCapacity: 8, HistoryMaxCapacity: 8})
	first := f.create("ns", "a", nil, "")
	f.create("ns", "b", nil, "")
	page := f.do(http.MethodGet, apiBase+"/namespaces/ns/widgets?limit=1", "", nil).list(t)
	require.NotEmpty(t, page.GetContinue())
	var inWindow, last string
	for i := range 20 {
		last = f.create("ns", "c"+strconv.Itoa(i), nil, "").GetResourceVersion()
		if i == 15 {
			inWindow = last
		}
	}
	// The cache holds the newest revision.
	f.do(http.MethodGet, apiBase+"/namespaces/ns/widgets?resourceVersion="+last, "", nil).list(t)
	lastRV, err := strconv.ParseInt(last, 10, 64)
	require.NoError(t, err)
	_, err = etcdServer.Client.Compact(testCtx(t), lastRV)
	require.NoError(t, err)

	for name, rv := range map[string]string{"in the cache's history": inWindow, "before it": first.GetResourceVersion()} {
		w := f.watch(apiBase + "/namespaces/ns/widgets?watch=true&resourceVersion=" + rv)
		e := w.next()
		require.Equal(t, "ERROR", e.Type, "watch from %s (%s): %s", rv, name, e.Object)
		st := e.status(t)
		require.Equal(t, int32(http.StatusGone), st.Code, name)
		require.Equal(t, metav1.StatusReasonExpired, st.Reason, name)
		w.expectEnd(5 * time.Second)
		f.do(http.MethodGet, apiBase+"/namespaces/ns/widgets?resourceVersionMatch=Exact&resourceVersion="+rv, "", nil).
			status(t, http.StatusGone, metav1.StatusReasonExpired)
	}
	f.do(http.MethodGet, apiBase+"/namespaces/ns/widgets?limit=1&continue="+url.QueryEscape(page.GetContinue()), "", nil).
		status(t, http.StatusGone, metav1.StatusReasonExpired)

	require.Len(t, f.do(http.MethodGet, apiBase+"/namespaces/ns/widgets?resourceVersionMatch=Exact&resourceVersion="+last, "", nil).list(t).Items, 22)
	w := f.watch(apiBase + "/namespaces/ns/widgets?watch=true&resourceVersion=" + last)
	d := f.create("ns", "d", nil, "")
	e := w.next()
	require.Equal(t, "ADDED", e.Type)
	require.Equal(t, d.GetResourceVersion(), e.object(t).GetResourceVersion())
}
