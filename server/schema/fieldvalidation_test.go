package schema

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// TestParseFieldValidation: "" is Warn, the three modes are themselves,
// anything else (case matters, as in Kubernetes) is 400.
func TestParseFieldValidation(t *testing.T) {
	for in, want := range map[string]string{"": Warn, "Strict": Strict, "Warn": Warn, "Ignore": Ignore} {
		got, err := ParseFieldValidation(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	_, err := ParseFieldValidation("strict")
	require.True(t, apierrors.IsBadRequest(err), err)
}

// TestFieldProblems: duplicate fields, unknown metadata fields and fields
// the schema does not declare are named and the unknown ones pruned;
// x-kubernetes-preserve-unknown-fields keeps a subtree.
func TestFieldProblems(t *testing.T) {
	free := spec.Schema{}
	free.Type = spec.StringOrArray{"object"}
	free.AddExtension("x-kubernetes-preserve-unknown-fields", true)
	s := &spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"object"}, Properties: map[string]spec.Schema{
		"spec": {SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"object"}, Properties: map[string]spec.Schema{
			"replicas": *spec.Int64Property(), "extra": free}}}}}}
	body := []byte(`{"spec":{"replicas":1,"replicas":2}}`)
	obj := map[string]any{
		"metadata": map[string]any{"name": "a", "bogus": true},
		"spec":     map[string]any{"replicas": int64(2), "foo": 1, "extra": map[string]any{"any": 1}},
		"status":   map[string]any{},
	}
	got := FieldProblems(s, body, obj)
	require.Equal(t, []string{`duplicate field "spec.replicas"`, `unknown field "metadata.bogus"`,
		`unknown field "spec.foo"`, `unknown field "status"`}, got)
	require.Equal(t, map[string]any{"metadata": map[string]any{"name": "a"},
		"spec": map[string]any{"replicas": int64(2), "extra": map[string]any{"any": 1}}}, obj)
	require.Empty(t, FieldProblems(nil, nil, map[string]any{"spec": map[string]any{"foo": 1}}), "no schema: only metadata is checked")
}

// TestEnforceFieldValidation: Strict is a 400 listing the problems, Warn
// one Warning header per problem, Ignore nothing.
func TestEnforceFieldValidation(t *testing.T) {
	problems := []string{`unknown field "spec.a"`, `unknown field "spec.b"`}
	err := EnforceFieldValidation(http.Header{}, Strict, problems)
	require.True(t, apierrors.IsBadRequest(err), err)
	require.ErrorContains(t, err, `strict decoding error: unknown field "spec.a", unknown field "spec.b"`)
	h := http.Header{}
	require.NoError(t, EnforceFieldValidation(h, Warn, problems))
	require.Equal(t, []string{`299 - "unknown field \"spec.a\""`, `299 - "unknown field \"spec.b\""`}, h.Values("Warning"))
	h = http.Header{}
	require.NoError(t, EnforceFieldValidation(h, Ignore, problems))
	require.Empty(t, h)
	require.NoError(t, EnforceFieldValidation(http.Header{}, Strict, nil))
}
