package server

import (
	"fmt"
	"reflect"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/util/validation/field"
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
	errs = append(errs, r.schemaErrors(u.Object)...)
	if len(errs) > 0 {
		return nil, apierrors.NewInvalid(schema.GroupKind{Group: r.Group, Kind: r.Kind}, name, errs)
	}
	return u, nil
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

// prepareCreate sets the fields the server owns on a new object.
func prepareCreate(u *unstructured.Unstructured) error {
	if u.GetResourceVersion() != "" {
		return badRequest("resourceVersion should not be set on objects to be created")
	}
	u.SetUID(uuid.NewUUID())
	u.SetCreationTimestamp(metav1.NewTime(time.Now().UTC().Truncate(time.Second)))
	u.SetGeneration(1)
	u.SetSelfLink("")
	u.SetDeletionTimestamp(nil)
	return nil
}

// carryOver keeps the server-owned fields of cur on next, an update of it:
// uid (a different uid in next is a 409 precondition failure),
// creationTimestamp, and generation, which grows when anything outside
// metadata and status changes.
func (r *resource) carryOver(cur, next *unstructured.Unstructured) error {
	if uid := next.GetUID(); uid != "" && uid != cur.GetUID() {
		return apierrors.NewConflict(schema.GroupResource{Group: r.Group, Resource: r.Plural}, cur.GetName(),
			fmt.Errorf("Precondition failed: UID in precondition: %v, UID in object meta: %v", uid, cur.GetUID()))
	}
	next.SetUID(cur.GetUID())
	next.SetCreationTimestamp(cur.GetCreationTimestamp())
	next.SetSelfLink("")
	gen := cur.GetGeneration()
	if specChanged(cur.Object, next.Object) {
		gen++
	}
	next.SetGeneration(gen)
	next.SetResourceVersion("")
	return nil
}

// specChanged reports whether a and b differ outside metadata and status.
func specChanged(a, b map[string]any) bool {
	for k, v := range a {
		if k == "metadata" || k == "status" {
			continue
		}
		if !reflect.DeepEqual(v, b[k]) {
			return true
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok && k != "metadata" && k != "status" {
			return true
		}
	}
	return false
}
