package server

import (
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/listwatch/listwatch/server/crdschema"
)

// normalize checks an object sent for t and fills what the request
// implies: apiVersion, kind, name (from the URL or generateName) and
// namespace (from the path). Type and identity mismatches (a name or
// namespace differing from the path's) are 400; metadata Kubernetes
// refuses (names that are not DNS-1123 subdomains, namespaces that are not
// DNS-1123 labels, bad label keys or values, annotation keys, annotations
// over 256 KiB, finalizers, ownerReferences) and objects that violate the
// resource's schema are 422 Invalid, with every field error as a cause
// and Kubernetes' messages.
func (r *resource) normalize(obj map[string]any, t target) (*unstructured.Unstructured, error) {
	if err := r.checkTypeMeta(obj); err != nil {
		return nil, err
	}
	if err := r.checkWritable(obj, t.name); err != nil {
		return nil, err
	}
	md, ok := obj["metadata"].(map[string]any)
	if !ok {
		if obj["metadata"] != nil {
			return nil, badRequest("metadata must be an object")
		}
		md = map[string]any{}
		obj["metadata"] = md
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(md, &metav1.ObjectMeta{}); err != nil {
		return nil, badRequest(fmt.Sprintf("invalid metadata: %v", err))
	}
	u := &unstructured.Unstructured{Object: obj}
	if t.name != "" {
		if n := u.GetName(); n == "" {
			u.SetName(t.name)
		} else if n != t.name {
			return nil, badRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", n, t.name))
		}
	} else if u.GetName() == "" && u.GetGenerateName() != "" {
		u.SetName(u.GetGenerateName() + rand.String(5))
	}
	if err := r.normalizeNamespace(u, t); err != nil {
		return nil, err
	}
	// Kubernetes' metadata rules and messages: name, generateName and
	// namespace, label keys and values, annotation keys and total size,
	// finalizers, ownerReferences, managedFields.
	name := u.GetName()
	errs := apivalidation.ValidateObjectMetaAccessor(u, r.Namespaced, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	errs = append(errs, crdschema.Errors(r.validator, u.Object)...)
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: r.Group, Kind: r.Kind}, name, errs)
	}
	if err := r.validateObject(u); err != nil {
		return nil, err
	}
	return u, nil
}

// validateObject runs the resource's Validate hook on u (see
// Resource.Validate).
func (r *resource) validateObject(u *unstructured.Unstructured) error {
	if r.Validate == nil {
		return nil
	}
	err := r.Validate(u)
	if err == nil {
		return nil
	}
	if _, ok := err.(apierrors.APIStatus); ok {
		return err
	}
	return badRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", r.Kind, r.Version, r.Kind, err))
}

func (r *resource) checkTypeMeta(obj map[string]any) error {
	for _, f := range []struct{ key, want string }{{"apiVersion", r.gvString}, {"kind", r.Kind}} {
		switch v := obj[f.key].(type) {
		case nil:
			obj[f.key] = f.want
		case string:
			if v == "" {
				obj[f.key] = f.want
			} else if v != f.want {
				return badRequest(fmt.Sprintf("the %s in the data (%s) does not match the expected %s (%s)", f.key, v, f.key, f.want))
			}
		default:
			return badRequest(fmt.Sprintf("%s must be a string", f.key))
		}
	}
	return nil
}

// errNamespaceMismatch is Kubernetes' 400 for an object whose namespace is
// not the one of the request's path.
var errNamespaceMismatch = badRequest("the namespace of the provided object does not match the namespace sent on the request")

// normalizeNamespace sets the path's namespace on u (none for cluster-scoped
// resources); a different namespace in u is a 400.
func (r *resource) normalizeNamespace(u *unstructured.Unstructured, t target) error {
	if !r.Namespaced {
		u.SetNamespace("")
		return nil
	}
	if ns := u.GetNamespace(); ns == "" {
		u.SetNamespace(t.namespace)
	} else if ns != t.namespace {
		return errNamespaceMismatch
	}
	return nil
}
