package widget

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

// KeyRoot is the storage key under which Widgets live; stores and cachers
// take it as their ResourcePrefix.
const KeyRoot = "/widgets"

// ErrNoKey is returned by KeyOf for an object without name or namespace.
var ErrNoKey = errors.New("widget: object has no namespace or name")

// ErrNotWidget is returned by GetAttrs for an object of another type.
var ErrNotWidget = errors.New("widget: not a *Widget or *unstructured.Unstructured")

// Key returns the storage key of the Widget namespace/name.
func Key(namespace, name string) string { return KeyRoot + "/" + namespace + "/" + name }

// NamespaceKey returns the key under which the Widgets of namespace are
// listed and watched (recursively). An empty namespace gives KeyRoot: all
// namespaces.
func NamespaceKey(namespace string) string {
	if namespace == "" {
		return KeyRoot
	}
	return KeyRoot + "/" + namespace
}

// KeyOf returns the storage key of obj (any object with metadata): a
// watchcache or cacher KeyFunc.
func KeyOf(obj runtime.Object) (string, error) {
	a, err := meta.Accessor(obj)
	if err != nil {
		return "", fmt.Errorf("widget: key of %T: %w", obj, err)
	}
	if a.GetNamespace() == "" || a.GetName() == "" {
		return "", fmt.Errorf("%w: %q/%q", ErrNoKey, a.GetNamespace(), a.GetName())
	}
	return Key(a.GetNamespace(), a.GetName()), nil
}

// SelectableFields are the fields GetAttrs returns besides metadata.name
// and metadata.namespace.
var SelectableFields = []string{"spec.nodeName"}

// GetAttrs returns a Widget's labels and its selectable fields
// (metadata.name, metadata.namespace, spec.nodeName): a storage AttrFunc.
// It takes a *Widget or an *unstructured.Unstructured Widget.
func GetAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	switch o := obj.(type) {
	case *Widget:
		return labels.Set(o.Labels), fields.Set{
			"metadata.name": o.Name, "metadata.namespace": o.Namespace, "spec.nodeName": o.Spec.NodeName,
		}, nil
	case *unstructured.Unstructured:
		node, _, _ := unstructured.NestedString(o.Object, "spec", "nodeName")
		return labels.Set(o.GetLabels()), fields.Set{
			"metadata.name": o.GetName(), "metadata.namespace": o.GetNamespace(), "spec.nodeName": node,
		}, nil
	}
	return nil, nil, fmt.Errorf("%w: %T", ErrNotWidget, obj)
}
