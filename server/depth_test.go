package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/server/schema"
)

// deepStatus is a JSON value of levels nested objects {"a":{"a":...1}}.
func deepStatus(levels int) string {
	return strings.Repeat(`{"a":`, levels) + "1" + strings.Repeat("}", levels)
}

// deepWidget is a widget body whose status nests levels objects deep.
func deepWidget(name string, levels int) string {
	return `{"apiVersion":"demo.listwatch.dev/v1","kind":"Widget","metadata":{"name":"` + name +
		`"},"status":` + deepStatus(levels) + `}`
}

// etcdKeys counts the keys below the test's prefix.
func etcdKeys(t *testing.T) int64 {
	t.Helper()
	resp, err := etcdServer.Client.Get(testCtx(t), embedtest.Prefix(t), clientv3.WithPrefix(), clientv3.WithCountOnly())
	require.NoError(t, err)
	return resp.Count
}

// TestWriteRefusesUnreadableNesting: an object whose stored form (with
// the managedFields the server adds, which mirror the status five levels
// deeper) or whose responses would exceed the JSON decoders' 10,000
// levels is refused with 422 by create, update, every patch and apply, and
// nothing reaches etcd; one level less is stored, and both it and its
// list can be read back by a Go client.
//
// Storing the deepest object costs the server seconds of CPU under -race
// (computing its managed fields grows with the square of the depth: 57 ms
// for 1,250 levels, 1.5 s for 9,990 without -race), so its latency scales
// with the machine's load, past a minute at a load of 25 on 2 cores. The test checks
// the answers, not the latency: the server's RequestTimeout and the
// client's deadline are the test binary's.
func TestWriteRefusesUnreadableNesting(t *testing.T) {
	budget := untilTestDeadline(t)
	f := newFixture(t, func(c *Config) { c.RequestTimeout = budget })
	f.timeout = budget
	const coll = apiBase + "/namespaces/default/widgets"
	const okLevels = 9990 // 6 + 9990 = 9996 levels as stored, 10,000 in a watch event of a Table

	for _, levels := range []int{okLevels + 1, okLevels + 2} {
		st := f.do(http.MethodPost, coll, "application/json", deepWidget("deep", levels)).
			status(t, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid)
		require.Contains(t, st.Message, "10000 levels")
		require.Contains(t, st.Message, `Widget "deep" is invalid`, "a create's error names the object from its body")
		require.Equal(t, "deep", st.Details.Name)
		require.NotContains(t, st.Message, "/widgets/")
		f.do(http.MethodPost, coll+"?dryRun=All", "application/json", deepWidget("deep", levels)).
			status(t, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid)
	}
	require.Zero(t, etcdKeys(t), "a refused create reached etcd")
	require.Equal(t, http.StatusOK, f.do(http.MethodGet, coll, "", nil).code)

	// Updates of an existing object: its stored value does not change.
	w := f.create("default", "w1", nil, "")
	obj := coll + "/w1"
	deep := deepStatus(okLevels + 1)
	for _, c := range []struct{ method, ct, body string }{
		{http.MethodPut, "application/json", deepWidget("w1", okLevels+1)},
		{http.MethodPatch, "application/merge-patch+json", `{"status":` + deep + `}`},
		{http.MethodPatch, "application/json-patch+json", `[{"op":"add","path":"/status","value":` + deep + `}]`},
		{http.MethodPatch, "application/apply-patch+yaml", deepWidget("w1", okLevels+1)},
	} {
		path := obj
		if c.ct == "application/apply-patch+yaml" {
			path += "?fieldManager=deep&force=true"
		}
		f.do(c.method, path, c.ct, c.body).status(t, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid)
		got := f.do(http.MethodGet, obj, "", nil).object(t)
		require.Equal(t, w.GetResourceVersion(), got.GetResourceVersion(), "%s %s changed the stored object", c.method, c.ct)
	}
	// Apply creating a new object.
	f.do(http.MethodPatch, coll+"/fresh?fieldManager=deep", "application/apply-patch+yaml", deepWidget("fresh", okLevels+1)).
		status(t, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid)
	require.Equal(t, int64(1), etcdKeys(t))

	// The deepest accepted object and its list decode.
	r := f.do(http.MethodPost, coll, "application/json", deepWidget("ok", okLevels))
	require.Equal(t, http.StatusCreated, r.code, string(r.body))
	require.NotEmpty(t, r.object(t).GetManagedFields())
	l := f.do(http.MethodGet, coll, "", nil)
	require.Equal(t, http.StatusOK, l.code)
	require.Len(t, l.list(t).Items, 2)
	var generic any
	require.NoError(t, json.Unmarshal(l.body, &generic), "the list of the deepest object must decode")
	tbl := f.doAccept(http.MethodGet, coll+"?includeObject=Object", "", "application/json;as=Table;v=v1;g=meta.k8s.io", nil)
	require.Equal(t, http.StatusOK, tbl.code)
	require.NoError(t, json.Unmarshal(tbl.body, &generic), "a Table including the deepest object must decode")
	require.Equal(t, int64(2), etcdKeys(t))
	require.Equal(t, okLevels+6, schema.NestingDepth(r.object(t).Object, 1, 20000))
}
