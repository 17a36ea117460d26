package server

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/server/wire"
)

// TestMetadataValidation: metadata Kubernetes refuses is 422 with its
// messages, on create and on update, and nothing is stored.
func TestMetadataValidation(t *testing.T) {
	f := newFixture(t)
	coll := apiBase + "/namespaces/default/widgets"
	big := strings.Repeat("x", 256*1024)
	for _, c := range []struct{ name, metadata, msg string }{
		{"label key", `{"name":"x","labels":{"bad key!":"v"}}`, `metadata.labels: Invalid value: "bad key!": name part must consist of alphanumeric characters`},
		{"label value", `{"name":"x","labels":{"app":"` + strings.Repeat("v", 64) + `"}}`, `metadata.labels: Invalid value: "` + strings.Repeat("v", 64) + `": must be no more than 63 bytes`},
		{"annotation key", `{"name":"x","annotations":{"a/b/c":"v"}}`, `metadata.annotations: Invalid value: "a/b/c": a valid label key must consist of alphanumeric characters`},
		{"annotation size", `{"name":"x","annotations":{"a":"` + big + `"}}`, `metadata.annotations: Too long: may not be more than 262144 bytes`},
		{"finalizer", `{"name":"x","finalizers":["example.com/bad finalizer"]}`, `metadata.finalizers: Invalid value: "example.com/bad finalizer": name part must consist of alphanumeric characters`},
		{"ownerReference", `{"name":"x","ownerReferences":[{"apiVersion":"v1","kind":"Pod","name":"p"}]}`, `metadata.ownerReferences[0].uid: Required value: must not be empty`},
	} {
		t.Run(c.name, func(t *testing.T) {
			body := `{"apiVersion":"demo.listwatch.dev/v1","kind":"Widget","metadata":` + c.metadata + `}`
			st := f.do(http.MethodPost, coll, "application/json", body).status(t, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid)
			require.Contains(t, st.Message, `Widget.demo.listwatch.dev "x" is invalid: `+c.msg)
		})
	}
	require.Empty(t, f.do(http.MethodGet, coll, "", nil).list(t).Items)

	f.create("default", "w1", nil, "")
	f.do(http.MethodPatch, coll+"/w1", wire.MediaMergePatch, `{"metadata":{"labels":{"-bad":"v"}}}`).
		status(t, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid)
	require.Empty(t, f.do(http.MethodGet, coll+"/w1", "", nil).object(t).GetLabels())
}
