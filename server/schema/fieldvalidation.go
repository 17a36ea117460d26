package schema

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/kube-openapi/pkg/validation/spec"
	sigsjson "sigs.k8s.io/json"
)

// The values of the fieldValidation query parameter, as Kubernetes defines
// them. A request without it is Warn.
const (
	// Strict fails a request with unknown or duplicate fields.
	Strict = "Strict"
	// Warn serves it and names each problem in a Warning header.
	Warn = "Warn"
	// Ignore serves it silently (unknown fields are pruned either way).
	Ignore = "Ignore"
)

// ParseFieldValidation reads the value of a request's fieldValidation
// parameter ("" is Warn; 400 BadRequest for an unknown value).
func ParseFieldValidation(v string) (string, error) {
	switch v {
	case "":
		return Warn, nil
	case Strict, Warn, Ignore:
		return v, nil
	default:
		return "", apierrors.NewBadRequest(fmt.Sprintf("fieldValidation %q is not one of %s, %s, %s",
			v, Strict, Warn, Ignore))
	}
}

// FieldProblems finds what fieldValidation governs in a request: fields
// given twice in body (a JSON document; nil to skip), and fields of obj
// that neither ObjectMeta nor schema (the resource's; nil: none) declares. Unknown
// fields are removed from obj, as Kubernetes prunes them, whatever the
// mode. Each problem reads like Kubernetes' (`unknown field "spec.foo"`).
func FieldProblems(schema *spec.Schema, body []byte, obj map[string]any) []string {
	var problems []string
	if body != nil {
		var scratch any
		if strict, err := sigsjson.UnmarshalStrict(body, &scratch, sigsjson.DisallowDuplicateFields); err == nil {
			for _, e := range strict {
				problems = append(problems, e.Error())
			}
		}
	}
	if md, ok := obj["metadata"].(map[string]any); ok {
		problems = append(problems, unknownMetadataFields(md)...)
	}
	if schema != nil {
		for key, v := range obj {
			if key == "apiVersion" || key == "kind" || key == "metadata" {
				continue
			}
			problems = append(problems, pruneUnknown(obj, key, v, schema, "")...)
		}
	}
	slices.Sort(problems)
	return problems
}

// unknownMetadataFields removes from md the fields ObjectMeta does not
// have and names them.
func unknownMetadataFields(md map[string]any) []string {
	known := objectMetaFields()
	var out []string
	for k := range md {
		if !known[k] {
			delete(md, k)
			out = append(out, fmt.Sprintf("unknown field %q", "metadata."+k))
		}
	}
	return out
}

// objectMetaFields is the set of metav1.ObjectMeta's JSON field names.
func objectMetaFields() map[string]bool {
	return map[string]bool{"name": true, "generateName": true, "namespace": true, "selfLink": true, "uid": true,
		"resourceVersion": true, "generation": true, "creationTimestamp": true, "deletionTimestamp": true,
		"deletionGracePeriodSeconds": true, "labels": true, "annotations": true, "ownerReferences": true,
		"finalizers": true, "managedFields": true}
}

// pruneUnknown checks the field key (value v) of parent against the object
// schema s, removing and naming it when s does not declare it, and
// recursing into declared objects and arrays.
func pruneUnknown(parent map[string]any, key string, v any, s *spec.Schema, path string) []string {
	field := key
	if path != "" {
		field = path + "." + key
	}
	sub, ok := propertySchema(s, key)
	if !ok {
		delete(parent, key)
		return []string{fmt.Sprintf("unknown field %q", field)}
	}
	return pruneValue(v, sub, field)
}

// pruneValue prunes the unknown fields inside v, whose schema is s.
func pruneValue(v any, s *spec.Schema, path string) []string {
	if s == nil || preservesUnknown(s) {
		return nil
	}
	var out []string
	switch x := v.(type) {
	case map[string]any:
		for k, kv := range x {
			out = append(out, pruneUnknown(x, k, kv, s, path)...)
		}
	case []any:
		if s.Items == nil || s.Items.Schema == nil {
			return nil
		}
		for i, item := range x {
			out = append(out, pruneValue(item, s.Items.Schema, path+"["+strconv.Itoa(i)+"]")...)
		}
	}
	return out
}

// propertySchema returns the schema of property key of the object schema
// s, and whether s allows the property at all.
func propertySchema(s *spec.Schema, key string) (*spec.Schema, bool) {
	if preservesUnknown(s) {
		return nil, true
	}
	if p, ok := s.Properties[key]; ok {
		return &p, true
	}
	if ap := s.AdditionalProperties; ap != nil && (ap.Allows || ap.Schema != nil) {
		return ap.Schema, true
	}
	return nil, false
}

// preservesUnknown reports x-kubernetes-preserve-unknown-fields: true.
func preservesUnknown(s *spec.Schema) bool {
	return extensionTrue(s, "x-kubernetes-preserve-unknown-fields")
}

// EnforceFieldValidation applies mode to problems: Strict fails the
// request (400, every problem listed, nothing written), Warn adds one
// Warning to h (the response's header) per problem, Ignore does nothing.
func EnforceFieldValidation(h http.Header, mode string, problems []string) error {
	if len(problems) == 0 {
		return nil
	}
	switch mode {
	case Strict:
		return apierrors.NewBadRequest("strict decoding error: " + strings.Join(problems, ", "))
	case Warn:
		for _, p := range problems {
			h.Add("Warning", "299 - "+strconv.Quote(p))
		}
	}
	return nil
}
