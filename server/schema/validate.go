package schema

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
)

// Normalize checks an object sent for the object name (the URL's, "" on a
// create) in namespace and fills what the request
// implies: apiVersion, kind, name (from the URL or generateName) and
// namespace (from the path). Type and identity mismatches (a name or
// namespace differing from the path's) are 400; metadata Kubernetes
// refuses (names that are not DNS-1123 subdomains, namespaces that are not
// DNS-1123 labels, bad label keys or values, annotation keys, annotations
// over 256 KiB, finalizers, ownerReferences) and objects that violate the
// resource's schema are 422 Invalid, with every field error as a cause
// and Kubernetes' messages.
func (r *Type) Normalize(obj map[string]any, name, namespace string) (*unstructured.Unstructured, error) {
	if err := r.CheckTypeMeta(obj); err != nil {
		return nil, err
	}
	if err := r.CheckWritable(obj, name); err != nil {
		return nil, err
	}
	md, ok := obj["metadata"].(map[string]any)
	if !ok {
		if obj["metadata"] != nil {
			return nil, apierrors.NewBadRequest("metadata must be an object")
		}
		md = map[string]any{}
		obj["metadata"] = md
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(md, &metav1.ObjectMeta{}); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid metadata: %v", err))
	}
	u := &unstructured.Unstructured{Object: obj}
	if name != "" {
		if n := u.GetName(); n == "" {
			u.SetName(name)
		} else if n != name {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", n, name))
		}
	} else if u.GetName() == "" && u.GetGenerateName() != "" {
		u.SetName(u.GetGenerateName() + rand.String(5))
	}
	if err := r.normalizeNamespace(u, namespace); err != nil {
		return nil, err
	}
	// Kubernetes' metadata rules and messages: name, generateName and
	// namespace, label keys and values, annotation keys and total size,
	// finalizers, ownerReferences, managedFields.
	name = u.GetName()
	errs := apivalidation.ValidateObjectMetaAccessor(u, r.namespaced, apivalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	errs = append(errs, Errors(r.validator, u.Object)...)
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: r.group, Kind: r.kind}, name, errs)
	}
	if err := r.ValidateObject(u); err != nil {
		return nil, err
	}
	return u, nil
}

// ValidateObject runs the resource's Validate hook on u (see
// TypeConfig.Validate).
func (r *Type) ValidateObject(u *unstructured.Unstructured) error {
	if r.validate == nil {
		return nil
	}
	err := r.validate(u)
	if err == nil {
		return nil
	}
	if _, ok := err.(apierrors.APIStatus); ok {
		return err
	}
	return apierrors.NewBadRequest(fmt.Sprintf("%s in version %q cannot be handled as a %s: %v", r.kind, r.version, r.kind, err))
}

// CheckTypeMeta fills an object's missing apiVersion and kind and refuses
// (400) others than the resource's.
func (r *Type) CheckTypeMeta(obj map[string]any) error {
	for _, f := range []struct{ key, want string }{{"apiVersion", r.wire.APIVersion()}, {"kind", r.kind}} {
		switch v := obj[f.key].(type) {
		case nil:
			obj[f.key] = f.want
		case string:
			if v == "" {
				obj[f.key] = f.want
			} else if v != f.want {
				return apierrors.NewBadRequest(fmt.Sprintf("the %s in the data (%s) does not match the expected %s (%s)", f.key, v, f.key, f.want))
			}
		default:
			return apierrors.NewBadRequest(fmt.Sprintf("%s must be a string", f.key))
		}
	}
	return nil
}

// ErrNamespaceMismatch is Kubernetes' 400 for an object whose namespace is
// not the one of the request's path.
var ErrNamespaceMismatch = apierrors.NewBadRequest("the namespace of the provided object does not match the namespace sent on the request")

// normalizeNamespace sets the path's namespace on u (none for cluster-scoped
// resources); a different namespace in u is a 400.
func (r *Type) normalizeNamespace(u *unstructured.Unstructured, namespace string) error {
	if !r.namespaced {
		u.SetNamespace("")
		return nil
	}
	if ns := u.GetNamespace(); ns == "" {
		u.SetNamespace(namespace)
	} else if ns != namespace {
		return ErrNamespaceMismatch
	}
	return nil
}
