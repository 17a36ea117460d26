// Package testapi defines Widget, a small typed API object registered in a
// scheme, with JSON codecs for it and for unstructured objects. Tests,
// benchmarks, the conformance suite and the demo use it.
package testapi

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
)

// GroupVersion is the API group and version of Widget.
var GroupVersion = schema.GroupVersion{Group: "demo.listwatch.dev", Version: "v1"}

// Widget is a namespaced test object.
type Widget struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              WidgetSpec `json:"spec,omitempty"`
}

// WidgetSpec is the desired state of a Widget.
type WidgetSpec struct {
	// NodeName is selectable as the field spec.nodeName.
	NodeName string `json:"nodeName,omitempty"`
	// Data is free-form payload (benchmarks pad objects with it).
	Data string `json:"data,omitempty"`
	// Replicas is a counter tests bump to make updates.
	Replicas int64 `json:"replicas,omitempty"`
}

// WidgetList is a list of Widgets.
type WidgetList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Widget `json:"items"`
}

// DeepCopyObject implements runtime.Object.
func (w *Widget) DeepCopyObject() runtime.Object { return w.DeepCopy() }

// DeepCopy returns a deep copy of w.
func (w *Widget) DeepCopy() *Widget {
	if w == nil {
		return nil
	}
	out := &Widget{TypeMeta: w.TypeMeta, Spec: w.Spec}
	w.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	return out
}

// DeepCopyObject implements runtime.Object.
func (l *WidgetList) DeepCopyObject() runtime.Object {
	if l == nil {
		return nil
	}
	out := &WidgetList{TypeMeta: l.TypeMeta}
	l.ListMeta.DeepCopyInto(&out.ListMeta)
	if l.Items != nil {
		out.Items = make([]Widget, len(l.Items))
		for i := range l.Items {
			out.Items[i] = *l.Items[i].DeepCopy()
		}
	}
	return out
}

// Scheme has Widget and WidgetList registered.
var Scheme = runtime.NewScheme()

// Codecs is the codec factory of Scheme.
var Codecs serializer.CodecFactory

// Codec encodes Widgets as JSON with apiVersion and kind.
var Codec runtime.Codec

// UnstructuredCodec encodes and decodes *unstructured.Unstructured as JSON.
var UnstructuredCodec runtime.Codec = unstructured.UnstructuredJSONScheme

func init() {
	Scheme.AddKnownTypes(GroupVersion, &Widget{}, &WidgetList{})
	metav1.AddToGroupVersion(Scheme, GroupVersion)
	Codecs = serializer.NewCodecFactory(Scheme)
	Codec = Codecs.LegacyCodec(GroupVersion)
}

// NewWidget returns an empty *Widget (a storage NewFunc).
func NewWidget() runtime.Object { return &Widget{} }

// NewWidgetList returns an empty *WidgetList (a storage NewListFunc).
func NewWidgetList() runtime.Object { return &WidgetList{} }

// NewUnstructured returns an empty *unstructured.Unstructured.
func NewUnstructured() runtime.Object { return &unstructured.Unstructured{} }

// NewUnstructuredList returns an empty *unstructured.UnstructuredList.
func NewUnstructuredList() runtime.Object { return &unstructured.UnstructuredList{} }

// Make returns a Widget in namespace ns named name with the given labels.
func Make(ns, name string, lbls map[string]string) *Widget {
	return &Widget{
		TypeMeta:   metav1.TypeMeta{APIVersion: GroupVersion.String(), Kind: "Widget"},
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: lbls},
	}
}

// MakeUnstructured returns an unstructured Widget.
func MakeUnstructured(ns, name string, lbls map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(GroupVersion.String())
	u.SetKind("Widget")
	u.SetNamespace(ns)
	u.SetName(name)
	if lbls != nil {
		u.SetLabels(lbls)
	}
	return u
}

// GetAttrs returns a Widget's labels and the fields metadata.name,
// metadata.namespace and spec.nodeName. It accepts *Widget and
// *unstructured.Unstructured.
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
	return nil, nil, fmt.Errorf("testapi: unexpected object type %T", obj)
}
