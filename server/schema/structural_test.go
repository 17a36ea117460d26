package schema

import (
	"testing"

	"github.com/stretchr/testify/require"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/listwatch/listwatch/examples/widget"
)

// TestCheckStructural: schemas the server cannot serve are refused with
// the offending path; the Widget schema passes.
func TestCheckStructural(t *testing.T) {
	require.NoError(t, CheckStructural(widget.Schema()))
	obj := func(x spec.Schema) *spec.Schema {
		return &spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"object"},
			Properties: map[string]spec.Schema{"x": x}}}
	}
	multi := spec.Schema{}
	multi.Type = spec.StringOrArray{"string", "integer"}
	ref := spec.Schema{}
	ref.Ref = spec.MustCreateRef("#/definitions/other")
	pattern := *spec.StringProperty()
	pattern.Pattern = "(["
	array := spec.Schema{}
	array.Type = spec.StringOrArray{"array"}
	untyped := spec.Schema{}
	intOrString := spec.Schema{}
	intOrString.AddExtension("x-kubernetes-int-or-string", true)
	require.NoError(t, CheckStructural(obj(intOrString)))
	for name, c := range map[string]struct {
		s    *spec.Schema
		want string
	}{
		"root not object": {&spec.Schema{SchemaProps: spec.SchemaProps{Type: spec.StringOrArray{"string"}}}, "root must have type object"},
		"two types":       {obj(multi), "schema.x: one type is allowed"},
		"ref":             {obj(ref), "schema.x: $ref is not allowed"},
		"bad pattern":     {obj(pattern), "schema.x: pattern"},
		"array no items":  {obj(array), "schema.x: an array needs one items schema"},
		"no type":         {obj(untyped), "schema.x: a type is required"},
	} {
		require.ErrorContains(t, CheckStructural(c.s), c.want, name)
	}
}
