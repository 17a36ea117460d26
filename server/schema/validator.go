package schema

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation/field"
	openapierrors "k8s.io/kube-openapi/pkg/validation/errors"
	"k8s.io/kube-openapi/pkg/validation/spec"
	"k8s.io/kube-openapi/pkg/validation/strfmt"
	"k8s.io/kube-openapi/pkg/validation/validate"
)

// NewValidator builds the validator of schema s (nil without a
// schema). kube-openapi panics on schemas it cannot use; that is reported
// as an error, at configuration time.
func NewValidator(s *spec.Schema) (v *validate.SchemaValidator, err error) {
	if s == nil {
		return nil, nil
	}
	defer func() {
		if p := recover(); p != nil {
			v, err = nil, fmt.Errorf("schema cannot be used for validation: %v", p)
		}
	}()
	return validate.NewSchemaValidator(s, nil, "", strfmt.Default), nil
}

// Errors validates obj (a whole object; apiVersion, kind and metadata are
// checked elsewhere) with v (from NewValidator; nil validates nothing) and
// returns every violation as a field error, as Kubernetes reports a custom
// resource's: types, required fields, formats, bounds, enums. v may serve
// concurrent calls.
func Errors(v *validate.SchemaValidator, obj map[string]any) field.ErrorList {
	if v == nil {
		return nil
	}
	body := make(map[string]any, len(obj))
	for k, v := range obj {
		if k != "apiVersion" && k != "kind" && k != "metadata" {
			body[k] = v
		}
	}
	res := v.Validate(body)
	var out field.ErrorList
	for _, err := range res.Errors {
		out = append(out, toFieldErrors(err)...)
	}
	return out
}

// toFieldErrors converts one kube-openapi validation error into field
// errors, keeping its path and kind of failure.
func toFieldErrors(err error) field.ErrorList {
	switch e := err.(type) {
	case *openapierrors.CompositeError:
		var out field.ErrorList
		for _, inner := range e.Errors {
			out = append(out, toFieldErrors(inner)...)
		}
		return out
	case *openapierrors.Validation:
		p := fieldPath(e.Name)
		switch e.Code() {
		case openapierrors.RequiredFailCode:
			return field.ErrorList{field.Required(p, "")}
		case openapierrors.EnumFailCode:
			values := make([]string, 0, len(e.Values))
			for _, v := range e.Values {
				values = append(values, fmt.Sprint(v))
			}
			return field.ErrorList{field.NotSupported(p, e.Value, values)}
		default:
			return field.ErrorList{field.Invalid(p, e.Value, e.Error())}
		}
	default:
		return field.ErrorList{field.Invalid(field.NewPath(""), nil, err.Error())}
	}
}

// fieldPath turns kube-openapi's dotted error name ("spec.items.0.name")
// into a field path (spec.items[0].name).
func fieldPath(name string) *field.Path {
	var p *field.Path
	for _, part := range strings.Split(name, ".") {
		if part == "" {
			continue
		}
		if i, err := strconv.Atoi(part); err == nil && p != nil {
			p = p.Index(i)
			continue
		}
		if p == nil {
			p = field.NewPath(part)
		} else {
			p = p.Child(part)
		}
	}
	if p == nil {
		return field.NewPath("<root>")
	}
	return p
}
