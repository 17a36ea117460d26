package storagetest

import (
	"fmt"
	"strconv"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/examples/widget"
)

// This file builds and inspects Widgets in whichever form (typed or
// unstructured) the Env's store uses.

// key returns the storage key of namespace ns, object name.
func (e *Env) key(ns, name string) string { return e.ResourcePrefix + "/" + ns + "/" + name }

// nsKey returns the key under which all objects of namespace ns live.
func (e *Env) nsKey(ns string) string { return e.ResourcePrefix + "/" + ns }

// newObj returns an unsaved Widget ns/name with the given labels.
func (e *Env) newObj(ns, name string, lbls map[string]string) runtime.Object {
	if e.Unstructured {
		return widget.NewUnstructuredWidget(ns, name, lbls)
	}
	return widget.NewWidget(ns, name).WithLabels(lbls)
}

// empty returns a zero object of the store's type.
func (e *Env) empty() runtime.Object {
	if e.Unstructured {
		return &unstructured.Unstructured{}
	}
	return &widget.Widget{}
}

// emptyList returns a zero list of the store's type.
func (e *Env) emptyList() runtime.Object {
	if e.Unstructured {
		return &unstructured.UnstructuredList{}
	}
	return &widget.WidgetList{}
}

func replicas(t *testing.T, obj runtime.Object) int64 {
	t.Helper()
	switch o := obj.(type) {
	case *widget.Widget:
		return o.Spec.Replicas
	case *unstructured.Unstructured:
		n, _, err := unstructured.NestedInt64(o.Object, "spec", "replicas")
		if err != nil {
			t.Fatalf("spec.replicas of %s: %v", describe(obj), err)
		}
		return n
	}
	t.Fatalf("unexpected object type %T", obj)
	return 0
}

func setReplicas(t *testing.T, obj runtime.Object, n int64) {
	t.Helper()
	switch o := obj.(type) {
	case *widget.Widget:
		o.Spec.Replicas = n
	case *unstructured.Unstructured:
		if err := unstructured.SetNestedField(o.Object, n, "spec", "replicas"); err != nil {
			t.Fatal(err)
		}
	default:
		t.Fatalf("unexpected object type %T", obj)
	}
}

func setNodeName(t *testing.T, obj runtime.Object, node string) {
	t.Helper()
	switch o := obj.(type) {
	case *widget.Widget:
		o.Spec.NodeName = node
	case *unstructured.Unstructured:
		if err := unstructured.SetNestedField(o.Object, node, "spec", "nodeName"); err != nil {
			t.Fatal(err)
		}
	default:
		t.Fatalf("unexpected object type %T", obj)
	}
}

func setLabels(t *testing.T, obj runtime.Object, lbls map[string]string) {
	t.Helper()
	accessor(t, obj).SetLabels(lbls)
}

func accessor(t *testing.T, obj runtime.Object) metav1.Object {
	t.Helper()
	acc, err := meta.Accessor(obj)
	if err != nil {
		t.Fatalf("object %T has no metadata: %v", obj, err)
	}
	return acc
}

// rvOf returns obj's resourceVersion, failing t when it is not a positive integer.
func rvOf(t *testing.T, obj runtime.Object) int64 {
	t.Helper()
	s := accessor(t, obj).GetResourceVersion()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		t.Fatalf("%s: resourceVersion %q is not a positive integer", describe(obj), s)
	}
	return n
}

// listRV returns a list's resourceVersion, failing t when it is not positive.
func listRV(t *testing.T, list runtime.Object) int64 {
	t.Helper()
	acc, err := meta.ListAccessor(list)
	if err != nil {
		t.Fatalf("list %T: %v", list, err)
	}
	n, err := strconv.ParseInt(acc.GetResourceVersion(), 10, 64)
	if err != nil || n <= 0 {
		t.Fatalf("list resourceVersion %q is not a positive integer", acc.GetResourceVersion())
	}
	return n
}

// listMeta returns a list's continue token and remaining item count.
func listMeta(t *testing.T, list runtime.Object) (string, *int64) {
	t.Helper()
	acc, err := meta.ListAccessor(list)
	if err != nil {
		t.Fatalf("list %T: %v", list, err)
	}
	return acc.GetContinue(), acc.GetRemainingItemCount()
}

// items returns a list's items.
func items(t *testing.T, list runtime.Object) []runtime.Object {
	t.Helper()
	objs, err := meta.ExtractList(list)
	if err != nil {
		t.Fatalf("extracting items of %T: %v", list, err)
	}
	return objs
}

// names returns "ns/name" of each object.
func names(t *testing.T, objs []runtime.Object) []string {
	t.Helper()
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		acc := accessor(t, o)
		out = append(out, acc.GetNamespace()+"/"+acc.GetName())
	}
	return out
}

// describe names an object for messages.
func describe(obj runtime.Object) string {
	acc, err := meta.Accessor(obj)
	if err != nil {
		return "<no metadata>"
	}
	return acc.GetNamespace() + "/" + acc.GetName() + "@" + acc.GetResourceVersion()
}

// setNested sets a field of an unstructured object.
func setNested(obj runtime.Object, value any, path ...string) error {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return fmt.Errorf("setNested: %T is not unstructured", obj)
	}
	return unstructured.SetNestedField(u.Object, value, path...)
}
