package schema

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// NewFieldManagers gives every type the field manager that records
// managedFields and merges server-side apply patches: apimachinery's
// managedfields over a structured-merge-diff type converter built from the
// resources' OpenAPI schemas (the same definitions /openapi/v3 serves).
func NewFieldManagers(resources []*Type) error {
	defs := map[string]*spec.Schema{}
	for name, s := range metaDefinitions(refV3) {
		defs[name] = &s
	}
	for _, r := range resources {
		rd, err := r.definitions(refV3)
		if err != nil {
			return err
		}
		for name, s := range rd {
			defs[name] = &s
		}
	}
	tc, err := managedfields.NewTypeConverter(defs, false)
	if err != nil {
		return fmt.Errorf("server: building the type converter from the schemas: %w", err)
	}
	for _, r := range resources {
		gvk := r.gv.WithKind(r.kind)
		fm, err := managedfields.NewDefaultCRDFieldManager(tc, singleVersion{}, noDefaults{}, unstructuredCreater{},
			gvk, r.gv, "", nil)
		if err != nil {
			return fmt.Errorf("server: resource %s: %w", r.plural, err)
		}
		r.fieldManager = fm
	}
	return nil
}

// singleVersion converts objects of resources served in one version: the
// only conversion is to the version the object already has.
type singleVersion struct{}

// Convert implements runtime.ObjectConvertor; no conversions exist.
func (singleVersion) Convert(in, out, _ any) error {
	return fmt.Errorf("no conversion from %T to %T", in, out)
}

// ConvertToVersion implements runtime.ObjectConvertor.
func (singleVersion) ConvertToVersion(in runtime.Object, gv runtime.GroupVersioner) (runtime.Object, error) {
	kind := in.GetObjectKind().GroupVersionKind()
	if target, ok := gv.KindForGroupVersionKinds([]schema.GroupVersionKind{kind}); !ok || target != kind {
		return nil, fmt.Errorf("%v cannot be converted to %v: only one version is served", kind, gv)
	}
	return in, nil
}

// ConvertFieldLabel implements runtime.ObjectConvertor.
func (singleVersion) ConvertFieldLabel(_ schema.GroupVersionKind, label, value string) (string, string, error) {
	return label, value, nil
}

// noDefaults is the defaulter of resources without defaults.
type noDefaults struct{}

// Default implements runtime.ObjectDefaulter.
func (noDefaults) Default(runtime.Object) {}

// unstructuredCreater makes empty unstructured objects of a kind.
type unstructuredCreater struct{}

// New implements runtime.ObjectCreater.
func (unstructuredCreater) New(kind schema.GroupVersionKind) (runtime.Object, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(kind)
	return u, nil
}

// EmptyObject is an object of r's kind with nothing else set (the "live"
// object of a create).
func (r *Type) EmptyObject() *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetGroupVersionKind(r.gv.WithKind(r.kind))
	return u
}

// RecordUpdate records in next's managedFields that manager set what it
// changed from live (an Update operation), as Kubernetes does on create,
// update and non-apply patches. Failures keep live's managedFields.
func (r *Type) RecordUpdate(live, next *unstructured.Unstructured, manager string) *unstructured.Unstructured {
	out := r.fieldManager.UpdateNoErrors(live, next, manager)
	if u, ok := out.(*unstructured.Unstructured); ok {
		return u
	}
	return next
}

// Apply merges a server-side apply patch by manager into live (see
// managedfields.FieldManager.Apply).
func (r *Type) Apply(live, patch *unstructured.Unstructured, manager string, force bool) (runtime.Object, error) {
	return r.fieldManager.Apply(live, patch, manager, force)
}
