package server

import (
	"errors"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Resource.Validate refuses what it does not accept on create, update,
// patch and apply: a plain error as kube-apiserver's 400 for a body it
// cannot decode, a status error as it is; nothing is stored.
func TestResourceValidateHook(t *testing.T) {
	f := newFixture(t, func(c *Config) {
		c.Resources[0].Validate = func(u *unstructured.Unstructured) error {
			if _, ok, _ := unstructured.NestedSlice(u.Object, "spec", "tags"); !ok {
				if _, found := u.Object["spec"].(map[string]any)["tags"]; found {
					return errors.New("spec.tags: not a list")
				}
			}
			return nil
		}
	})
	bad := testWidget("default", "w1", nil, "n1")
	bad["spec"].(map[string]any)["tags"] = "not-a-list"
	st := f.do(http.MethodPost, apiBase+"/namespaces/default/widgets", "application/json", bad).
		status(t, http.StatusBadRequest, metav1.StatusReasonBadRequest)
	require.Equal(t, `Widget in version "v1" cannot be handled as a Widget: spec.tags: not a list`, st.Message)
	f.do(http.MethodGet, apiBase+"/namespaces/default/widgets/w1", "", nil).status(t, http.StatusNotFound, metav1.StatusReasonNotFound)

	f.create("default", "w1", nil, "n1")
	path := apiBase + "/namespaces/default/widgets/w1"
	f.do(http.MethodPatch, path, "application/merge-patch+json", `{"spec":{"tags":"not-a-list"}}`).
		status(t, http.StatusBadRequest, metav1.StatusReasonBadRequest)
	f.do(http.MethodPatch, path+"?fieldManager=m", "application/apply-patch+yaml",
		"apiVersion: demo.listwatch.dev/v1\nkind: Widget\nmetadata:\n  name: w1\nspec:\n  tags: not-a-list\n").
		status(t, http.StatusBadRequest, metav1.StatusReasonBadRequest)
	r := f.do(http.MethodPatch, path, "application/merge-patch+json", `{"spec":{"tags":["ok"]}}`)
	require.Equal(t, http.StatusOK, r.code, string(r.body))
}
