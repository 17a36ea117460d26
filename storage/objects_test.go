package storage

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

func TestSetObject(t *testing.T) {
	src := &metav1.Status{Message: "src"}
	dst := &metav1.Status{Message: "dst"}
	if !SetObject(dst, src) || dst.Message != "src" {
		t.Fatalf("same types: got %q", dst.Message)
	}
	var nilStatus *metav1.Status
	for name, tc := range map[string]struct{ dst, src runtime.Object }{
		"other type": {&metav1.Status{Message: "dst"}, &unstructured.Unstructured{}},
		"nil src":    {&metav1.Status{Message: "dst"}, nil},
		"nil ptr":    {&metav1.Status{Message: "dst"}, nilStatus},
		"nil dst":    {nil, src},
	} {
		if SetObject(tc.dst, tc.src) {
			t.Errorf("%s: set", name)
		}
		if s, ok := tc.dst.(*metav1.Status); ok && s.Message != "dst" {
			t.Errorf("%s: dst changed to %q", name, s.Message)
		}
	}
}

func TestNewLike(t *testing.T) {
	out, ok := NewLike(&metav1.Status{Message: "x"})
	if s, isStatus := out.(*metav1.Status); !ok || !isStatus || s.Message != "" {
		t.Fatalf("NewLike(status) = %#v, %v", out, ok)
	}
	if out, ok := NewLike(nil); ok || out != nil {
		t.Fatalf("NewLike(nil) = %v, %v", out, ok)
	}
}
