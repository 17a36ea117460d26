package server

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/server/schema"
	"github.com/listwatch/listwatch/server/wire"
)

const tableAccept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"

// TestTable: lists and gets asked for as a meta.k8s.io/v1 Table answer
// with NAME, the configured columns and AGE, one row per object.
func TestTable(t *testing.T) {
	f := newFixture(t, withWidgetSchema)
	coll := apiBase + "/namespaces/ns/widgets"
	f.create("ns", "w1", nil, "n1")
	r := f.do(http.MethodPatch, coll+"/w1", wire.MediaMergePatch, `{"spec":{"replicas":3}}`)
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	f.create("ns", "w2", nil, "")

	decode := func(r response) metav1.Table {
		t.Helper()
		require.Equal(t, http.StatusOK, r.code, string(r.body))
		require.Equal(t, schema.TableMediaType, r.header.Get("Content-Type"))
		var tbl metav1.Table
		require.NoError(t, json.Unmarshal(r.body, &tbl))
		require.Equal(t, "Table", tbl.Kind)
		return tbl
	}
	tbl := decode(f.doAccept(http.MethodGet, coll, "", tableAccept, nil))
	var names []string
	for _, c := range tbl.ColumnDefinitions {
		names = append(names, c.Name)
	}
	require.Equal(t, []string{"Name", "Size", "Node", "Age"}, names)
	require.Equal(t, int32(1), tbl.ColumnDefinitions[2].Priority)
	require.NotEmpty(t, tbl.ResourceVersion)
	require.Len(t, tbl.Rows, 2)
	require.Equal(t, []any{"w1", float64(3), "n1"}, tbl.Rows[0].Cells[:3])
	require.Equal(t, []any{"w2", nil, nil}, tbl.Rows[1].Cells[:3], "missing values are empty cells")
	age, ok := tbl.Rows[0].Cells[3].(string)
	require.True(t, ok)
	_, err := time.ParseDuration(age)
	require.NoError(t, err, "age %q", age)
	var partial metav1.PartialObjectMetadata
	require.NoError(t, json.Unmarshal(tbl.Rows[0].Object.Raw, &partial))
	require.Equal(t, "PartialObjectMetadata", partial.Kind)
	require.Equal(t, "w1", partial.Name)

	tbl = decode(f.doAccept(http.MethodGet, coll+"/w1?includeObject=Object", "", "application/json;as=Table;v=v1;g=meta.k8s.io", nil))
	require.Len(t, tbl.Rows, 1)
	require.Contains(t, string(tbl.Rows[0].Object.Raw), `"replicas":3`)
	tbl = decode(f.doAccept(http.MethodGet, coll+"?includeObject=None&labelSelector=x%3Dy", "", tableAccept, nil))
	require.Empty(t, tbl.Rows)

	f.doAccept(http.MethodGet, coll+"?includeObject=All", "", tableAccept, nil).
		status(t, http.StatusBadRequest, metav1.StatusReasonBadRequest)
	// Plain JSON first still gets the list; a v1beta1-only Table is 406.
	require.Equal(t, "WidgetList", f.doAccept(http.MethodGet, coll, "", "application/json,"+tableAccept, nil).list(t).GetKind())
	f.doAccept(http.MethodGet, coll, "", "application/json;as=Table;v=v1beta1;g=meta.k8s.io", nil).
		status(t, http.StatusNotAcceptable, metav1.StatusReasonNotAcceptable)
}

func TestPrinterColumnConfig(t *testing.T) {
	for _, cols := range [][]PrinterColumn{
		{{Name: "", Type: "string", JSONPath: ".a"}},
		{{Name: "Name", Type: "string", JSONPath: ".a"}},
		{{Name: "X", Type: "string", JSONPath: ".a"}, {Name: "x", Type: "string", JSONPath: ".b"}},
		{{Name: "X", Type: "object", JSONPath: ".a"}},
		{{Name: "X", Type: "string", JSONPath: ".a[*]"}},
	} {
		_, err := New(Config{Resources: []Resource{{Group: group, Version: "v1", Plural: "widgets", Kind: "Widget",
			Storage: newStore(t, "/widgets"), KeyRoot: "/widgets", PrinterColumns: cols}}})
		require.ErrorContains(t, err, "printer column", "%+v", cols)
	}
}

// TestWatchTable: a watch asked for as a Table sends each object as a
// one-row Table (as kubectl get -w asks), bookmarks as usual.
func TestWatchTable(t *testing.T) {
	f := newFixture(t, withWidgetSchema)
	coll := apiBase + "/namespaces/ns/widgets"
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	// Watch from the list's RV: a watch without one starts with the state
	// read when its goroutine runs, which may already hold the writes below.
	rv := f.do(http.MethodGet, coll, "", nil).list(t).GetResourceVersion()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.ts.URL+coll+"?watch=true&resourceVersion="+rv, nil)
	require.NoError(t, err)
	req.Header.Set("Accept", tableAccept)
	resp, err := f.client.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	f.create("ns", "w1", nil, "n1")
	r := f.do(http.MethodPatch, coll+"/w1", wire.MediaMergePatch, `{"spec":{"replicas":6}}`)
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	dec := json.NewDecoder(resp.Body)
	for _, want := range []struct {
		typ  string
		size any
	}{{"ADDED", nil}, {"MODIFIED", float64(6)}} {
		var ev struct {
			Type   string       `json:"type"`
			Object metav1.Table `json:"object"`
		}
		require.NoError(t, dec.Decode(&ev))
		require.Equal(t, want.typ, ev.Type)
		require.Equal(t, "Table", ev.Object.Kind)
		require.Len(t, ev.Object.ColumnDefinitions, 4)
		require.Len(t, ev.Object.Rows, 1)
		require.Equal(t, []any{"w1", want.size, "n1"}, ev.Object.Rows[0].Cells[:3])
		require.NotEmpty(t, ev.Object.ResourceVersion)
	}

	f.doAccept(http.MethodGet, coll+"?watch=true&includeObject=Everything", "", tableAccept, nil).
		status(t, http.StatusBadRequest, metav1.StatusReasonBadRequest)
}
