package widget

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// The HTTP server (package server) stores objects as
// *unstructured.Unstructured; these are what its storage is built with.

// UnstructuredCodec encodes and decodes *unstructured.Unstructured and
// *unstructured.UnstructuredList as JSON.
var UnstructuredCodec runtime.Codec = unstructured.UnstructuredJSONScheme

// NewUnstructured returns an empty *unstructured.Unstructured: a NewFunc.
func NewUnstructured() runtime.Object { return &unstructured.Unstructured{} }

// NewUnstructuredList returns an empty *unstructured.UnstructuredList: a
// NewListFunc.
func NewUnstructuredList() runtime.Object { return &unstructured.UnstructuredList{} }

// NewUnstructuredWidget returns a Widget named name in namespace, with
// apiVersion, kind and labels set, as an *unstructured.Unstructured.
func NewUnstructuredWidget(namespace, name string, labels map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(GroupVersion.String())
	u.SetKind(Kind)
	u.SetNamespace(namespace)
	u.SetName(name)
	if labels != nil {
		u.SetLabels(labels)
	}
	return u
}
