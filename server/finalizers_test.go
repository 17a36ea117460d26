package server

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// DELETE of an object with finalizers marks it (deletionTimestamp,
// deletionGracePeriodSeconds 0) and keeps it; a new finalizer is then
// 422; removing the last finalizer deletes it. The registry does this for
// the server as it does for in-process callers.
func TestDeleteWithFinalizersOverHTTP(t *testing.T) {
	f := newFixture(t)
	w := testWidget("default", "w1", nil, "")
	w["metadata"].(map[string]any)["finalizers"] = []any{"example.com/a"}
	r := f.do(http.MethodPost, apiBase+"/namespaces/default/widgets", "application/json", w)
	require.Equal(t, http.StatusCreated, r.code, string(r.body))
	path := apiBase + "/namespaces/default/widgets/w1"

	del := f.do(http.MethodDelete, path, "", nil)
	require.Equal(t, http.StatusOK, del.code, string(del.body))
	marked := del.object(t)
	require.NotNil(t, marked.GetDeletionTimestamp())
	require.NotNil(t, marked.GetDeletionGracePeriodSeconds())
	require.Equal(t, int64(0), *marked.GetDeletionGracePeriodSeconds())
	got := f.do(http.MethodGet, path, "", nil)
	require.Equal(t, http.StatusOK, got.code, string(got.body))
	require.NotNil(t, got.object(t).GetDeletionTimestamp())

	f.do(http.MethodPatch, path, "application/merge-patch+json",
		`{"metadata":{"finalizers":["example.com/a","example.com/b"]}}`).
		status(t, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid)

	p := f.do(http.MethodPatch, path, "application/merge-patch+json", `{"metadata":{"finalizers":null}}`)
	require.Equal(t, http.StatusOK, p.code, string(p.body))
	f.do(http.MethodGet, path, "", nil).status(t, http.StatusNotFound, metav1.StatusReasonNotFound)
}
