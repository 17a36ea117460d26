package schema

import (
	"errors"
	"fmt"
	"regexp"

	"k8s.io/kube-openapi/pkg/validation/spec"
)

// schemaTypes are the types a structural schema node may have.
var schemaTypes = map[string]bool{"object": true, "array": true, "string": true, "integer": true, "number": true, "boolean": true}

// CheckStructural checks the rules of Kubernetes' structural schemas that
// the server relies on, so that a schema it cannot serve fails at
// configuration time rather than on a request: the root is an object;
// every node has one type (or none with x-kubernetes-preserve-unknown-
// fields or x-kubernetes-int-or-string); arrays have one items schema;
// there are no $refs; patterns compile. Every violation is reported with
// its path.
func CheckStructural(s *spec.Schema) error {
	var errs []error
	if len(s.Type) != 1 || s.Type[0] != "object" {
		errs = append(errs, errors.New("schema: the root must have type object"))
	}
	walkSchema(s, "schema", &errs)
	return errors.Join(errs...)
}

func walkSchema(s *spec.Schema, path string, errs *[]error) {
	fail := func(format string, args ...any) {
		*errs = append(*errs, fmt.Errorf("%s: %s", path, fmt.Sprintf(format, args...)))
	}
	if s.Ref.String() != "" {
		fail("$ref is not allowed")
	}
	switch {
	case len(s.Type) > 1:
		fail("one type is allowed, not %v", []string(s.Type))
	case len(s.Type) == 1 && !schemaTypes[s.Type[0]]:
		fail("type %q is not one of object, array, string, integer, number, boolean", s.Type[0])
	case len(s.Type) == 0 && !extensionTrue(s, "x-kubernetes-preserve-unknown-fields") && !extensionTrue(s, "x-kubernetes-int-or-string"):
		fail("a type is required (or x-kubernetes-preserve-unknown-fields or x-kubernetes-int-or-string)")
	}
	if s.Pattern != "" {
		if _, err := regexp.Compile(s.Pattern); err != nil {
			fail("pattern %q does not compile: %v", s.Pattern, err)
		}
	}
	if len(s.Type) == 1 && s.Type[0] == "array" && (s.Items == nil || s.Items.Schema == nil) {
		fail("an array needs one items schema")
	}
	for name, p := range s.Properties {
		walkSchema(&p, path+"."+name, errs)
	}
	if ap := s.AdditionalProperties; ap != nil && ap.Schema != nil {
		walkSchema(ap.Schema, path+".additionalProperties", errs)
	}
	if s.Items != nil && s.Items.Schema != nil {
		walkSchema(s.Items.Schema, path+".items", errs)
	}
}

// extensionTrue reports whether s has the boolean extension name set to
// true.
func extensionTrue(s *spec.Schema, name string) bool {
	v, ok := s.Extensions.GetBool(name)
	return ok && v
}
