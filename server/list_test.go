package server

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func names(l *unstructured.UnstructuredList) []string {
	out := []string{}
	for _, it := range l.Items {
		out = append(out, it.GetNamespace()+"/"+it.GetName())
	}
	return out
}

func TestListPaginationAndSelectors(t *testing.T) {
	f := newFixture(t)
	for i := range 5 {
		f.create("ns1", fmt.Sprintf("w%d", i), map[string]string{"app": fmt.Sprintf("a%d", i%2)}, fmt.Sprintf("node-%d", i%3))
	}
	f.create("ns2", "x", map[string]string{"app": "a0"}, "node-0")

	all := f.do(http.MethodGet, apiBase+"/namespaces/ns1/widgets", "", nil).list(t)
	require.Equal(t, "WidgetList", all.GetKind())
	require.Equal(t, "demo.listwatch.dev/v1", all.GetAPIVersion())
	require.NotEmpty(t, all.GetResourceVersion())
	require.Equal(t, []string{"ns1/w0", "ns1/w1", "ns1/w2", "ns1/w3", "ns1/w4"}, names(all))
	for _, it := range all.Items {
		require.Equal(t, "Widget", it.GetKind())
	}

	// Pages of 2, all at the first page's RV even with a write in between.
	var got []string
	cont, pages := "", 0
	first := f.do(http.MethodGet, apiBase+"/namespaces/ns1/widgets?limit=2", "", nil).list(t)
	rv := first.GetResourceVersion()
	got = append(got, names(first)...)
	cont = first.GetContinue()
	f.create("ns1", "w9", nil, "")
	for cont != "" {
		pages++
		require.Less(t, pages, 10)
		p := f.do(http.MethodGet, apiBase+"/namespaces/ns1/widgets?limit=2&continue="+url.QueryEscape(cont), "", nil).list(t)
		require.Equal(t, rv, p.GetResourceVersion())
		got = append(got, names(p)...)
		cont = p.GetContinue()
	}
	require.Equal(t, names(all), got)

	cases := []struct{ query, want string }{
		{"labelSelector=app%3Da0", "[ns1/w0 ns1/w2 ns1/w4]"},
		{"labelSelector=app,app%21%3Da0", "[ns1/w1 ns1/w3]"},
		{"fieldSelector=metadata.name%3Dw3", "[ns1/w3]"},
		{"fieldSelector=spec.nodeName%3Dnode-0", "[ns1/w0 ns1/w3]"},
		{"fieldSelector=spec.nodeName%3Dnode-0,metadata.name%21%3Dw0&labelSelector=app", "[ns1/w3]"},
	}
	for _, c := range cases {
		l := f.do(http.MethodGet, apiBase+"/namespaces/ns1/widgets?"+c.query, "", nil).list(t)
		require.Equal(t, c.want, fmt.Sprint(names(l)), c.query)
	}

	// All namespaces, with a namespace field selector.
	l := f.do(http.MethodGet, apiBase+"/widgets?labelSelector=app%3Da0", "", nil).list(t)
	require.Equal(t, "[ns1/w0 ns1/w2 ns1/w4 ns2/x]", fmt.Sprint(names(l)))
	l = f.do(http.MethodGet, apiBase+"/widgets?fieldSelector=metadata.namespace%3Dns2", "", nil).list(t)
	require.Equal(t, "[ns2/x]", fmt.Sprint(names(l)))
	// An empty collection still has items: [].
	r := f.do(http.MethodGet, apiBase+"/namespaces/empty/widgets", "", nil)
	require.Contains(t, string(r.body), `"items":[]`)
}

func TestListResourceVersionsAndCompaction(t *testing.T) {
	f := newFixture(t)
	f.create("ns", "a", nil, "")
	l1 := f.do(http.MethodGet, apiBase+"/namespaces/ns/widgets", "", nil).list(t)
	f.create("ns", "b", nil, "")

	exact := f.do(http.MethodGet, apiBase+"/namespaces/ns/widgets?resourceVersionMatch=Exact&resourceVersion="+l1.GetResourceVersion(), "", nil).list(t)
	require.Equal(t, []string{"ns/a"}, names(exact))
	require.Equal(t, l1.GetResourceVersion(), exact.GetResourceVersion())
	now := f.do(http.MethodGet, apiBase+"/namespaces/ns/widgets?resourceVersion=0", "", nil).list(t)
	require.Len(t, now.Items, 2)

	page := f.do(http.MethodGet, apiBase+"/namespaces/ns/widgets?limit=1", "", nil).list(t)
	require.NotEmpty(t, page.GetContinue())
	f.create("ns", "c", nil, "")
	rv, err := strconv.ParseInt(f.do(http.MethodGet, apiBase+"/namespaces/ns/widgets", "", nil).list(t).GetResourceVersion(), 10, 64)
	require.NoError(t, err)
	require.NoError(t, etcdServer.Compact(testCtx(t), rv))

	f.do(http.MethodGet, apiBase+"/namespaces/ns/widgets?resourceVersionMatch=Exact&resourceVersion="+l1.GetResourceVersion(), "", nil).
		status(t, http.StatusGone, metav1.StatusReasonExpired)
	f.do(http.MethodGet, apiBase+"/namespaces/ns/widgets?limit=1&continue="+url.QueryEscape(page.GetContinue()), "", nil).
		status(t, http.StatusGone, metav1.StatusReasonExpired)
}
