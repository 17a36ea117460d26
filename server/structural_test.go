package server

import (
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// TestNewRefusesNonStructuralSchema: New refuses a resource whose schema
// the server cannot serve, naming the offending path.
func TestNewRefusesNonStructuralSchema(t *testing.T) {
	ref := spec.Schema{}
	ref.Ref = spec.MustCreateRef("#/definitions/other")
	s := &spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"object"},
		Properties: map[string]spec.Schema{"x": ref}}}
	_, err := New(Config{Resources: []Resource{{Group: group, Version: "v1", Plural: "widgets", Kind: "Widget",
		Storage: newStore(t, "/widgets"), KeyRoot: "/widgets", Schema: s}}})
	require.ErrorContains(t, err, "schema.x: $ref is not allowed")
}
