package client

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/listwatch/listwatch/reflector"
)

// Object is an API object with Kubernetes metadata, such as
// *widget.Widget or *unstructured.Unstructured: the same constraint the
// informers use.
type Object = reflector.Object

// ObjectList is a list of Objects, such as *widget.WidgetList: a
// runtime.Object with ListMeta whose items meta.ExtractList can read.
type ObjectList = runtime.Object

// ObjectKey names an object: namespace ("" for cluster-scoped kinds) and
// name.
type ObjectKey = types.NamespacedName

// Key returns the ObjectKey namespace/name.
func Key(namespace, name string) ObjectKey {
	return ObjectKey{Namespace: namespace, Name: name}
}

// KeyOf returns obj's ObjectKey.
func KeyOf(obj Object) ObjectKey {
	return ObjectKey{Namespace: obj.GetNamespace(), Name: obj.GetName()}
}
