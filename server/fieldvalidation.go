package server

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"k8s.io/kube-openapi/pkg/validation/spec"
	sigsjson "sigs.k8s.io/json"
)

// The values of the fieldValidation query parameter, as Kubernetes defines
// them. A request without it is Warn.
const (
	fieldValidationStrict = "Strict"
	fieldValidationWarn   = "Warn"
	fieldValidationIgnore = "Ignore"
)

// fieldValidation reads the request's fieldValidation parameter (400 for
// an unknown value).
func fieldValidation(req *http.Request) (string, error) {
	switch v := req.URL.Query().Get("fieldValidation"); v {
	case "":
		return fieldValidationWarn, nil
	case fieldValidationStrict, fieldValidationWarn, fieldValidationIgnore:
		return v, nil
	default:
		return "", badRequest(fmt.Sprintf("fieldValidation %q is not one of %s, %s, %s",
			v, fieldValidationStrict, fieldValidationWarn, fieldValidationIgnore))
	}
}

// fieldProblems finds what fieldValidation governs in a request: fields
// given twice in body (a JSON document; nil to skip), and fields of obj
// that neither ObjectMeta nor the resource's schema declares. Unknown
// fields are removed from obj, as Kubernetes prunes them, whatever the
// mode. Each problem reads like Kubernetes' (`unknown field "spec.foo"`).
func (r *resource) fieldProblems(body []byte, obj map[string]any) []string {
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
	if r.Schema != nil {
		for key, v := range obj {
			if key == "apiVersion" || key == "kind" || key == "metadata" {
				continue
			}
			problems = append(problems, pruneUnknown(obj, key, v, r.Schema, "")...)
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

// enforceFieldValidation applies mode to problems: Strict fails the
// request (400, every problem listed, nothing written), Warn adds one
// Warning header per problem, Ignore does nothing.
func enforceFieldValidation(w http.ResponseWriter, mode string, problems []string) error {
	if len(problems) == 0 {
		return nil
	}
	switch mode {
	case fieldValidationStrict:
		return badRequest("strict decoding error: " + strings.Join(problems, ", "))
	case fieldValidationWarn:
		for _, p := range problems {
			w.Header().Add("Warning", "299 - "+strconv.Quote(p))
		}
	}
	return nil
}

// decodeValidated decodes a create or update body and applies the request's
// fieldValidation to it.
func (s *Server) decodeValidated(w http.ResponseWriter, req *http.Request, r *resource, body []byte) (map[string]any, error) {
	mode, err := fieldValidation(req)
	if err != nil {
		return nil, err
	}
	obj, err := decodeJSONObject(body)
	if err != nil {
		return nil, err
	}
	if err := enforceFieldValidation(w, mode, r.fieldProblems(body, obj)); err != nil {
		return nil, err
	}
	return obj, nil
}
