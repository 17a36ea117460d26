package pack

import (
	"reflect"
	"sync/atomic"
	"unsafe"
	"weak"

	"k8s.io/apimachinery/pkg/runtime"
)

// Ref is a weak reference to a decoded object: it does not keep the
// object alive. Its one word points at the object's data; the packer that
// made it knows the type to rebuild the object with (weak.Pointer needs a
// static type, and a cache learns its objects' type only at run time).
type Ref struct{ p weak.Pointer[byte] }

// objectType is the pointer type of the first object a packer refers to
// weakly; only objects of that type get a Ref (a cache almost always holds
// one type).
type objectType struct {
	t atomic.Pointer[reflect.Type]
}

// hold returns a Ref to obj, nil when obj is not a non-nil pointer of the
// packer's type to a value that is not zero-sized.
func (o *objectType) hold(obj runtime.Object) *Ref {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Type().Elem().Size() == 0 {
		return nil
	}
	t := v.Type()
	known := o.t.Load()
	if known == nil {
		o.t.CompareAndSwap(nil, &t)
		known = o.t.Load()
	}
	if *known != t {
		return nil
	}
	return &Ref{p: weak.Make((*byte)(v.UnsafePointer()))}
}

// held returns the object r refers to, nil once it was collected.
func (o *objectType) held(r *Ref) runtime.Object {
	p := r.p.Value()
	if p == nil {
		return nil
	}
	return reflect.NewAt((*o.t.Load()).Elem(), unsafe.Pointer(p)).Interface().(runtime.Object)
}
