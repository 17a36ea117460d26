package storage

import (
	"reflect"

	"k8s.io/apimachinery/pkg/runtime"
)

// SetObject makes *dst the object src points to, a shallow copy: src must
// be the caller's to give away (pass src.DeepCopyObject() otherwise). It
// reports false, changing nothing, unless dst and src are non-nil pointers
// of one type; each caller words that error for its own layer.
func SetObject(dst, src runtime.Object) bool {
	if dst == nil || src == nil {
		return false
	}
	d, s := reflect.ValueOf(dst), reflect.ValueOf(src)
	if d.Kind() != reflect.Pointer || d.Type() != s.Type() || d.IsNil() || s.IsNil() {
		return false
	}
	d.Elem().Set(s.Elem())
	return true
}

// NewLike returns a new zero object of obj's type. It reports false when
// obj is not a non-nil pointer to a type whose pointer is a runtime.Object.
func NewLike(obj runtime.Object) (runtime.Object, bool) {
	if obj == nil {
		return nil, false
	}
	t := reflect.TypeOf(obj)
	if t.Kind() != reflect.Pointer {
		return nil, false
	}
	out, ok := reflect.New(t.Elem()).Interface().(runtime.Object)
	return out, ok
}
