package server

import (
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/listwatch/listwatch/server/wire"
)

// causes returns the field and type of each cause of st.
func causes(st metav1.Status) map[string]metav1.CauseType {
	out := map[string]metav1.CauseType{}
	if st.Details != nil {
		for _, c := range st.Details.Causes {
			out[c.Field] = c.Type
		}
	}
	return out
}

// TestSchemaValidation: objects that violate the schema are refused with
// 422 Invalid naming every field error, on create, update and patch, and
// nothing is written.
func TestSchemaValidation(t *testing.T) {
	f := newFixture(t, withWidgetSchema)
	coll := apiBase + "/namespaces/ns/widgets"

	bad := `{"apiVersion":"demo.listwatch.dev/v1","kind":"Widget","metadata":{"name":"w1"},
		"spec":{"replicas":"two","nodeName":5}}`
	st := f.do(http.MethodPost, coll, "application/json", bad).status(t, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid)
	require.Equal(t, map[string]metav1.CauseType{
		"spec.replicas": metav1.CauseTypeFieldValueInvalid, "spec.nodeName": metav1.CauseTypeFieldValueInvalid,
	}, causes(st), st.Message)
	require.Contains(t, st.Message, "spec.replicas in body must be of type integer")
	f.do(http.MethodGet, coll+"/w1", "", nil).status(t, http.StatusNotFound, metav1.StatusReasonNotFound)

	cur := f.create("ns", "w1", nil, "n1")
	st = f.do(http.MethodPut, coll+"/w1", "application/json",
		`{"apiVersion":"demo.listwatch.dev/v1","kind":"Widget","metadata":{"name":"w1"},"spec":{"replicas":-1}}`).
		status(t, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid)
	require.Equal(t, map[string]metav1.CauseType{"spec.replicas": metav1.CauseTypeFieldValueInvalid}, causes(st), st.Message)
	f.do(http.MethodPatch, coll+"/w1", wire.MediaMergePatch, `{"spec":{"replicas":"x"}}`).
		status(t, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid)
	f.do(http.MethodPatch, coll+"/w1", wire.MediaJSONPatch, `[{"op":"add","path":"/spec/replicas","value":1.5}]`).
		status(t, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid)
	require.Equal(t, cur.GetResourceVersion(), f.do(http.MethodGet, coll+"/w1", "", nil).object(t).GetResourceVersion(), "nothing written")

	// With fieldValidation: Strict refuses unknown fields first (400);
	// Warn warns about them and still refuses the invalid value (422).
	withUnknown := `{"apiVersion":"demo.listwatch.dev/v1","kind":"Widget","metadata":{"name":"w2"},"spec":{"replicas":"two","foo":1}}`
	f.do(http.MethodPost, coll+"?fieldValidation=Strict", "application/json", withUnknown).
		status(t, http.StatusBadRequest, metav1.StatusReasonBadRequest)
	r := f.do(http.MethodPost, coll, "application/json", withUnknown)
	st = r.status(t, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid)
	require.Equal(t, map[string]metav1.CauseType{"spec.replicas": metav1.CauseTypeFieldValueInvalid}, causes(st))
	require.Equal(t, []string{`299 - "unknown field \"spec.foo\""`}, r.header.Values("Warning"))

	r = f.do(http.MethodPatch, coll+"/w1", wire.MediaMergePatch, `{"spec":{"replicas":4}}`)
	require.Equal(t, http.StatusOK, r.code, string(r.body))
}

// TestSchemaValidationRequiredAndFormats: required properties, enums and
// formats of a schema are enforced, each error with its path.
func TestSchemaValidationRequiredAndFormats(t *testing.T) {
	s := &spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"object"}, Required: []string{"spec"},
		Properties: map[string]spec.Schema{"spec": {SchemaProps: spec.SchemaProps{
			Type: spec.StringOrArray{"object"}, Required: []string{"nodeName"},
			Properties: map[string]spec.Schema{
				"nodeName": *spec.StringProperty(),
				"mode":     {SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"string"}, Enum: []any{"fast", "slow"}}},
				"since":    *spec.DateTimeProperty(),
				"ports": *spec.ArrayProperty(&spec.Schema{SchemaProps: spec.SchemaProps{
					Type: spec.StringOrArray{"integer"}, Maximum: ptr(65535.0)}}),
			}}}}}}
	f := newFixture(t, func(cfg *Config) { cfg.Resources[0].Schema = s })
	coll := apiBase + "/namespaces/ns/widgets"
	st := f.do(http.MethodPost, coll, "application/json", `{"metadata":{"name":"w1"}}`).
		status(t, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid)
	require.Equal(t, map[string]metav1.CauseType{"spec": metav1.CauseTypeFieldValueRequired}, causes(st), st.Message)
	st = f.do(http.MethodPost, coll, "application/json",
		`{"metadata":{"name":"w1"},"spec":{"mode":"medium","since":"yesterday","ports":[80,70000]}}`).
		status(t, http.StatusUnprocessableEntity, metav1.StatusReasonInvalid)
	require.Equal(t, map[string]metav1.CauseType{
		"spec.nodeName": metav1.CauseTypeFieldValueRequired,
		"spec.mode":     metav1.CauseTypeFieldValueNotSupported,
		"spec.since":    metav1.CauseTypeFieldValueInvalid,
		"spec.ports[1]": metav1.CauseTypeFieldValueInvalid,
	}, causes(st), st.Message)
	r := f.do(http.MethodPost, coll, "application/json",
		`{"metadata":{"name":"w1"},"spec":{"nodeName":"n","mode":"fast","since":"2026-01-02T03:04:05Z","ports":[80]}}`)
	require.Equal(t, http.StatusCreated, r.code, string(r.body))
}

func ptr[T any](v T) *T { return &v }

// TestSchemaValidatorConcurrent: one resource's validator serves
// concurrent requests (run with -race).
func TestSchemaValidatorConcurrent(t *testing.T) {
	f := newFixture(t, withWidgetSchema)
	r := f.srv.resources[group+"/v1/widgets"]
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				errs := r.ValidationErrors(map[string]any{"spec": map[string]any{"replicas": "x", "nodeName": int64(i)}})
				assert.Len(t, errs, 2)
			}
		}()
	}
	wg.Wait()
}
