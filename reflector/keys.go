package reflector

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Object is the constraint on the objects reflectors, stores and informers
// handle: an API object with metadata, such as *widget.Widget or
// *unstructured.Unstructured.
type Object interface {
	runtime.Object
	metav1.Object
}

// KeyFunc computes the store key of an object.
type KeyFunc[T any] func(obj T) (string, error)

// ErrNilObject is returned when a nil object is given where one is required.
var ErrNilObject = errors.New("reflector: nil object")

// MetaNamespaceKeyFunc returns "namespace/name", or "name" for a
// cluster-scoped object. It fails on a nil object or an empty name.
func MetaNamespaceKeyFunc[T Object](obj T) (string, error) {
	if isNil(obj) {
		return "", ErrNilObject
	}
	name := obj.GetName()
	if name == "" {
		return "", fmt.Errorf("reflector: object %T has no name", obj)
	}
	if ns := obj.GetNamespace(); ns != "" {
		return ns + "/" + name, nil
	}
	return name, nil
}

// SplitMetaNamespaceKey splits a key made by MetaNamespaceKeyFunc into its
// namespace ("" for cluster-scoped) and name.
func SplitMetaNamespaceKey(key string) (namespace, name string, err error) {
	parts := strings.Split(key, "/")
	switch len(parts) {
	case 1:
		if parts[0] != "" {
			return "", parts[0], nil
		}
	case 2:
		if parts[1] != "" {
			return parts[0], parts[1], nil
		}
	}
	return "", "", fmt.Errorf("reflector: unexpected key format %q", key)
}

// isNil reports whether v is nil or a typed nil pointer.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Interface, reflect.Slice:
		return rv.IsNil()
	}
	return false
}
