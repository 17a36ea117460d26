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

// TestDryRun: dryRun=All checks and answers create, update, patch, apply
// and delete as usual and writes nothing.
func TestDryRun(t *testing.T) {
	f := newFixture(t, withWidgetSchema)
	coll := apiBase + "/namespaces/ns/widgets"
	get := func(name string) response { return f.do(http.MethodGet, coll+"/"+name, "", nil) }

	r := f.do(http.MethodPost, coll+"?dryRun=All", "application/json", testWidget("", "d1", nil, "n1"))
	require.Equal(t, http.StatusCreated, r.code, string(r.body))
	require.NotEmpty(t, r.object(t).GetUID())
	require.Empty(t, r.object(t).GetResourceVersion())
	get("d1").status(t, http.StatusNotFound, metav1.StatusReasonNotFound)
	f.do(http.MethodPost, coll+"?dryRun=All", "application/json", `{"metadata":{"name":"d1"},"spec":{"replicas":"x"}}`).
		status(t, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid)
	f.do(http.MethodPost, coll+"?dryRun=Some", "application/json", testWidget("", "d1", nil, "n1")).
		status(t, http.StatusBadRequest, metav1.StatusReasonBadRequest)

	cur := f.create("ns", "w1", nil, "n1")
	rv := cur.GetResourceVersion()
	next := cur.DeepCopy()
	next.Object["spec"] = map[string]any{"replicas": int64(3)}
	r = f.do(http.MethodPut, coll+"/w1?dryRun=All", "application/json", next.Object)
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	replicas, _, _ := unstructured.NestedInt64(r.object(t).Object, "spec", "replicas")
	require.Equal(t, int64(3), replicas)
	require.Equal(t, rv, r.object(t).GetResourceVersion())

	r = f.do(http.MethodPatch, coll+"/w1?dryRun=All", wire.MediaMergePatch, `{"spec":{"replicas":4}}`)
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	require.Equal(t, int64(2), r.object(t).GetGeneration())

	apply := "apiVersion: demo.listwatch.dev/v1\nkind: Widget\nmetadata:\n  name: NAME\nspec:\n  replicas: 5\n"
	r = f.do(http.MethodPatch, coll+"/w1?dryRun=All&fieldManager=a", wire.MediaApplyPatch, strings.Replace(apply, "NAME", "w1", 1))
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	require.Contains(t, managers(t, r.object(t)), "a/Apply")
	r = f.do(http.MethodPatch, coll+"/d2?dryRun=All&fieldManager=a", wire.MediaApplyPatch, strings.Replace(apply, "NAME", "d2", 1))
	require.Equal(t, http.StatusCreated, r.code, string(r.body))
	get("d2").status(t, http.StatusNotFound, metav1.StatusReasonNotFound)

	r = f.do(http.MethodDelete, coll+"/w1?dryRun=All", "", nil)
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	f.do(http.MethodDelete, coll+"/w1", "application/json", `{"dryRun":["All"],"preconditions":{"resourceVersion":"1"}}`).
		status(t, http.StatusConflict, metav1.StatusReasonConflict)

	after := get("w1").object(t)
	require.Equal(t, rv, after.GetResourceVersion(), "nothing written")
	require.Equal(t, cur.Object["spec"], after.Object["spec"])
}
