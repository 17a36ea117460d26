package server

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// widgetSchema declares spec.replicas and spec.nodeName, and keeps
// anything under status.
func widgetSchema() *spec.Schema {
	status := spec.Schema{}
	status.Type = spec.StringOrArray{"object"}
	status.AddExtension("x-kubernetes-preserve-unknown-fields", true)
	return &spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"object"}, Properties: map[string]spec.Schema{
		"spec": {SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"object"}, Properties: map[string]spec.Schema{
			"replicas": *spec.Int64Property(),
			"nodeName": *spec.StringProperty(),
		}}},
		"status": status,
	}}}
}

const unknownFieldsBody = `{"apiVersion":"demo.listwatch.dev/v1","kind":"Widget",
	"metadata":{"name":"NAME","namespace":"ns","colour":"red"},
	"spec":{"replicas":1,"replicas":2,"foo":1},"status":{"anything":true},"extra":"x"}`

// TestFieldValidation: Kubernetes' fieldValidation on create, update and
// patch. Strict refuses unknown and duplicate fields with 400 listing every
// path and writes nothing; Warn (the default) accepts, drops unknown
// fields and warns once per field; Ignore drops them silently.
func TestFieldValidation(t *testing.T) {
	f := newFixture(t, func(cfg *Config) { cfg.Resources[0].Schema = widgetSchema() })
	coll := apiBase + "/namespaces/ns/widgets"
	body := func(name string) string { return strings.Replace(unknownFieldsBody, "NAME", name, 1) }
	problems := []string{`duplicate field "spec.replicas"`, `unknown field "extra"`, `unknown field "metadata.colour"`, `unknown field "spec.foo"`}

	st := f.do(http.MethodPost, coll+"?fieldValidation=Strict", "application/json", body("strict")).
		status(t, http.StatusBadRequest, metav1.StatusReasonBadRequest)
	for _, p := range problems {
		require.Contains(t, st.Message, p)
	}
	f.do(http.MethodGet, coll+"/strict", "", nil).status(t, http.StatusNotFound, metav1.StatusReasonNotFound)

	for _, mode := range []string{"", "?fieldValidation=Warn", "?fieldValidation=Ignore"} {
		name := "m" + strings.ToLower(strings.TrimPrefix(mode, "?fieldValidation="))
		r := f.do(http.MethodPost, coll+mode, "application/json", body(name))
		require.Equal(t, http.StatusCreated, r.code, string(r.body))
		if mode == "?fieldValidation=Ignore" {
			require.Empty(t, r.header.Values("Warning"))
		} else {
			require.Len(t, r.header.Values("Warning"), len(problems), r.header.Values("Warning"))
			require.Contains(t, r.header.Values("Warning"), `299 - "unknown field \"spec.foo\""`)
		}
		got := f.do(http.MethodGet, coll+"/"+name, "", nil).object(t).Object
		require.Equal(t, map[string]any{"replicas": int64(2)}, got["spec"], mode)
		require.NotContains(t, got, "extra")
		require.Equal(t, map[string]any{"anything": true}, got["status"], "x-kubernetes-preserve-unknown-fields keeps status")
	}

	// Update and merge patch follow the same rules.
	cur := f.do(http.MethodGet, coll+"/mwarn", "", nil).object(t)
	f.do(http.MethodPut, coll+"/mwarn?fieldValidation=Strict", "application/json", body("mwarn")).
		status(t, http.StatusBadRequest, metav1.StatusReasonBadRequest)
	f.do(http.MethodPatch, coll+"/mwarn?fieldValidation=Strict", "application/merge-patch+json", `{"spec":{"bar":1}}`).
		status(t, http.StatusBadRequest, metav1.StatusReasonBadRequest)
	require.Equal(t, cur.GetResourceVersion(), f.do(http.MethodGet, coll+"/mwarn", "", nil).object(t).GetResourceVersion(), "nothing written")
	r := f.do(http.MethodPatch, coll+"/mwarn", "application/merge-patch+json", `{"spec":{"bar":1,"replicas":5}}`)
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	require.Equal(t, []string{`299 - "unknown field \"spec.bar\""`}, r.header.Values("Warning"))
	require.Equal(t, map[string]any{"replicas": int64(5)}, r.object(t).Object["spec"])

	f.do(http.MethodPost, coll+"?fieldValidation=strict", "application/json", body("bad")).
		status(t, http.StatusBadRequest, metav1.StatusReasonBadRequest)
}

// TestFieldValidationYAMLDuplicates: a YAML body (create, update, apply)
// that gives a key twice keeps the last value and warns by default, and
// is 400 under fieldValidation=Strict, naming the line and key as
// Kubernetes does.
func TestFieldValidationYAMLDuplicates(t *testing.T) {
	f := newFixture(t, func(cfg *Config) { cfg.Resources[0].Schema = widgetSchema() })
	coll := apiBase + "/namespaces/ns/widgets"
	doc := func(name string) string {
		return "apiVersion: demo.listwatch.dev/v1\nkind: Widget\nmetadata:\n  name: " + name + "\nspec:\n  replicas: 1\n  replicas: 2\n"
	}
	const dup = `line 7: key \"replicas\" already set in map`

	r := f.do(http.MethodPost, coll+"?fieldValidation=Strict", "application/yaml", doc("y1"))
	st := r.status(t, http.StatusBadRequest, metav1.StatusReasonBadRequest)
	require.Contains(t, st.Message, `line 7: key "replicas" already set in map`)
	f.do(http.MethodGet, coll+"/y1", "", nil).status(t, http.StatusNotFound, metav1.StatusReasonNotFound)

	r = f.do(http.MethodPost, coll, "application/yaml", doc("y1"))
	require.Equal(t, http.StatusCreated, r.code, string(r.body))
	require.Contains(t, r.header.Values("Warning"), `299 - "`+dup+`"`)
	require.EqualValues(t, 2, r.object(t).Object["spec"].(map[string]any)["replicas"], "the last value is kept")

	r = f.do(http.MethodPut, coll+"/y1?fieldValidation=Strict", "application/yaml", doc("y1"))
	r.status(t, http.StatusBadRequest, metav1.StatusReasonBadRequest)
	r = f.do(http.MethodPatch, coll+"/y1?fieldManager=m&fieldValidation=Strict", "application/apply-patch+yaml", doc("y1"))
	r.status(t, http.StatusBadRequest, metav1.StatusReasonBadRequest)
	r = f.do(http.MethodPatch, coll+"/y1?fieldManager=m", "application/apply-patch+yaml", doc("y1"))
	require.Equal(t, http.StatusOK, r.code, string(r.body))
	require.Contains(t, r.header.Values("Warning"), `299 - "`+dup+`"`)
}
