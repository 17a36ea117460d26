package server

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/listwatch/listwatch/server/wire"
)

// managers returns each managedFields entry of u as "manager/operation"
// with its fieldsV1 JSON.
func managers(t *testing.T, u *unstructured.Unstructured) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, e := range u.GetManagedFields() {
		require.NotNil(t, e.FieldsV1, "%s has fields", e.Manager)
		out[e.Manager+"/"+string(e.Operation)] = string(e.FieldsV1.Raw)
	}
	return out
}

// TestServerSideApply: apply creates and updates with managedFields kept,
// a second manager's conflicting apply is 409 naming the manager and the
// field (nothing written), force takes the field over, and ordinary
// writes are recorded as Update operations.
func TestServerSideApply(t *testing.T) {
	f := newFixture(t, withWidgetSchema)
	item := apiBase + "/namespaces/ns/widgets/w1"
	apply := func(manager, query, body string) response {
		return f.do(http.MethodPatch, item+"?fieldManager="+manager+query, wire.MediaApplyPatch, body)
	}
	const v1 = "apiVersion: demo.listwatch.dev/v1\nkind: Widget\nmetadata:\n  name: w1\n  labels:\n    owner: a\nspec:\n  replicas: 1\n"

	r := apply("a", "", v1)
	require.Equal(t, http.StatusCreated, r.code, string(r.body))
	u := r.object(t)
	require.Equal(t, "ns", u.GetNamespace())
	require.NotEmpty(t, u.GetUID())
	require.Equal(t, int64(1), u.GetGeneration())
	m := managers(t, u)
	require.Len(t, m, 1, m)
	require.Contains(t, m["a/Apply"], `"f:replicas":{}`)
	require.Contains(t, m["a/Apply"], `"f:owner":{}`)

	r = apply("a", "", strings.Replace(v1, "replicas: 1", "replicas: 2", 1))
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	require.Equal(t, int64(2), r.object(t).GetGeneration())
	rv := r.object(t).GetResourceVersion()

	// Manager b wants another value of a's field: 409, unchanged.
	const byB = "apiVersion: demo.listwatch.dev/v1\nkind: Widget\nmetadata:\n  name: w1\nspec:\n  replicas: 5\n"
	st := apply("b", "", byB).status(t, http.StatusConflict, metav1.StatusReasonConflict)
	require.Contains(t, st.Message, `conflict with "a"`)
	require.Contains(t, st.Message, ".spec.replicas")
	require.Equal(t, map[string]metav1.CauseType{".spec.replicas": metav1.CauseTypeFieldManagerConflict}, causes(st))
	require.Equal(t, rv, f.do(http.MethodGet, item, "", nil).object(t).GetResourceVersion(), "nothing written")

	r = apply("b", "&force=true", byB)
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	u = r.object(t)
	replicas, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
	require.Equal(t, int64(5), replicas)
	m = managers(t, u)
	require.Contains(t, m["b/Apply"], `"f:replicas":{}`)
	require.NotContains(t, m["a/Apply"], `"f:replicas"`, "force took the field from a")

	// A merge patch is an Update by its manager (or the user agent).
	r = f.do(http.MethodPatch, item+"?fieldManager=c", wire.MediaMergePatch, `{"spec":{"nodeName":"n9"}}`)
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	require.Contains(t, managers(t, r.object(t))["c/Update"], `"f:nodeName":{}`)

	// Applying without a field a owned removes it (the label).
	r = apply("a", "", "apiVersion: demo.listwatch.dev/v1\nkind: Widget\nmetadata:\n  name: w1\n")
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	require.Empty(t, r.object(t).GetLabels())

	// Bad applies change nothing.
	rv = f.do(http.MethodGet, item, "", nil).object(t).GetResourceVersion()
	st = apply("a", "", "apiVersion: demo.listwatch.dev/v1\nkind: Widget\nmetadata:\n  name: w1\nspec:\n  replicas: two\n").
		status(t, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid)
	require.Equal(t, map[string]metav1.CauseType{"spec.replicas": metav1.CauseTypeFieldValueInvalid}, causes(st))
	apply("a", "", "apiVersion: demo.listwatch.dev/v1\nkind: Widget\nmetadata:\n  name: other\n").
		status(t, http.StatusBadRequest, metav1.StatusReasonBadRequest)
	apply("a", "", "apiVersion: demo.listwatch.dev/v2\nkind: Widget\nmetadata:\n  name: w1\n").
		status(t, http.StatusBadRequest, metav1.StatusReasonBadRequest)
	apply("a", "", "{not yaml: [").status(t, http.StatusBadRequest, metav1.StatusReasonBadRequest)
	apply("a", "&fieldValidation=Strict", "apiVersion: demo.listwatch.dev/v1\nkind: Widget\nmetadata:\n  name: w1\nspec:\n  bogus: 1\n").
		status(t, http.StatusBadRequest, metav1.StatusReasonBadRequest)
	apply(strings.Repeat("m", 129), "", v1).status(t, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid)
	require.Equal(t, rv, f.do(http.MethodGet, item, "", nil).object(t).GetResourceVersion(), "nothing written")
}

// TestCreateUpdateRecordManagedFields: create and update record an Update
// entry for the request's manager, named by fieldManager or the user
// agent's first word.
func TestCreateUpdateRecordManagedFields(t *testing.T) {
	f := newFixture(t, withWidgetSchema)
	coll := apiBase + "/namespaces/ns/widgets"
	r := f.do(http.MethodPost, coll+"?fieldManager=creator", "application/json", testWidget("", "w1", map[string]string{"a": "b"}, "n1"))
	require.Equal(t, http.StatusCreated, r.code, string(r.body))
	m := managers(t, r.object(t))
	require.Contains(t, m["creator/Update"], `"f:nodeName":{}`)
	require.Contains(t, m["creator/Update"], `"f:a":{}`)

	u := r.object(t)
	u.Object["spec"] = map[string]any{"nodeName": "n1", "replicas": int64(4)}
	u.SetManagedFields(nil)
	r = f.do(http.MethodPut, coll+"/w1", "application/json", u.Object) // Go-http-client/1.1 as user agent
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	m = managers(t, r.object(t))
	require.Contains(t, m["Go-http-client/Update"], `"f:replicas":{}`)
	require.Contains(t, m["creator/Update"], `"f:nodeName":{}`, "the creator keeps what it set")
}

// TestApplyWithoutSchema: a resource without a schema still supports apply
// (fields are deduced from the values).
func TestApplyWithoutSchema(t *testing.T) {
	f := newFixture(t)
	item := apiBase + "/gadgets/g1"
	body := "apiVersion: demo.listwatch.dev/v1\nkind: Gadget\nmetadata:\n  name: g1\nspec:\n  colour: red\n"
	r := f.do(http.MethodPatch, item+"?fieldManager=a", wire.MediaApplyPatch, body)
	require.Equal(t, http.StatusCreated, r.code, string(r.body))
	require.Contains(t, managers(t, r.object(t))["a/Apply"], "f:colour")
	f.do(http.MethodPatch, item+"?fieldManager=b", wire.MediaApplyPatch, strings.Replace(body, "red", "blue", 1)).
		status(t, http.StatusConflict, metav1.StatusReasonConflict)
}
