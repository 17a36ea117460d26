package schema

import (
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// TestErrors: violations come back as field errors with their paths and
// kinds; apiVersion, kind and metadata are not the schema's to check; no
// validator checks nothing.
func TestErrors(t *testing.T) {
	replicas := *spec.Int64Property()
	s := &spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"object"}, Properties: map[string]spec.Schema{
		"spec": {SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"object"}, Required: []string{"size"},
			Properties: map[string]spec.Schema{"replicas": replicas, "size": *spec.StringProperty().WithEnum("s", "m")}}}}}}
	v, err := NewValidator(s)
	require.NoError(t, err)
	errs := Errors(v, map[string]any{"apiVersion": "x/v1", "kind": "X", "metadata": map[string]any{"name": 1},
		"spec": map[string]any{"replicas": "x"}})
	got := map[string]field.ErrorType{}
	for _, e := range errs {
		got[e.Field] = e.Type
	}
	require.Equal(t, map[string]field.ErrorType{"spec.replicas": field.ErrorTypeInvalid, "spec.size": field.ErrorTypeRequired}, got)
	errs = Errors(v, map[string]any{"spec": map[string]any{"size": "xl"}})
	require.Len(t, errs, 1)
	require.Equal(t, field.ErrorTypeNotSupported, errs[0].Type)
	require.Empty(t, Errors(nil, map[string]any{"spec": 1}))
	none, err := NewValidator(nil)
	require.NoError(t, err)
	require.Nil(t, none)
}
