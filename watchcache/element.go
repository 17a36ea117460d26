package watchcache

import (
	"fmt"
	"reflect"
	"sync/atomic"
	"unsafe"
	"weak"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

// Element is one object of the current state with the attributes used to
// filter it. Elements are immutable once stored.
//
// A cache without a Codec keeps each element's decoded object. A cache
// with one keeps its encoding instead, and a weak pointer to the newest
// decoded object (at first the object the cache was given): Object returns
// that object while anything else still references it, and otherwise
// decodes a new one and points at it. Readers at the same time share one
// object; an element nobody reads costs its encoding only.
type Element struct {
	// Key is the storage key.
	Key string
	// RV is the object's resourceVersion (its last write).
	RV uint64
	// Labels is the object's label set (as GetAttrs returned it, usually
	// the object's own map, shared between objects with equal labels).
	Labels labels.Set
	// Fields is the object's field set, in compact form.
	Fields Fields

	// obj is the decoded object (caches without a Codec).
	obj runtime.Object
	// raw is the object's encoding (caches with a Codec).
	raw []byte
	// dec decodes raw; nil without a Codec.
	dec *decoder
	// hot points weakly at the newest object decoded from raw (or raw
	// was encoded from); the only field that changes after the element
	// is stored.
	hot atomic.Pointer[weak.Pointer[byte]]
}

// NewElement returns an element holding obj decoded, as a cache without a
// Codec stores it. It is meant for tests and for callers that build
// elements to filter.
func NewElement(key string, obj runtime.Object, rv uint64, l labels.Set, f Fields) *Element {
	return &Element{Key: key, obj: obj, RV: rv, Labels: l, Fields: f}
}

// Object returns the element's object, which callers must not modify.
// With a Codec it may be a fresh decoding of the element; the error is
// then a decoding error (which means the Codec cannot read its own
// output).
func (e *Element) Object() (runtime.Object, error) {
	if e.dec == nil {
		return e.obj, nil
	}
	if h := e.hot.Load(); h != nil {
		if p := h.Value(); p != nil {
			return e.dec.rebuild(p), nil
		}
	}
	obj, err := e.dec.codec.Decode(e.raw)
	if err != nil {
		return nil, fmt.Errorf("watchcache: decoding %q: %w", e.Key, err)
	}
	e.pointAt(obj)
	return obj, nil
}

// Encoded returns the element's encoding by the cache's Codec, which
// callers must not modify, and false when the cache keeps decoded objects.
func (e *Element) Encoded() ([]byte, bool) {
	return e.raw, e.dec != nil
}

// Codec encodes the objects of a cache that keeps them encoded, and decodes
// them on read. Both methods must be safe for concurrent use.
type Codec interface {
	// Encode returns obj's encoding. The cache calls it once per stored
	// object, before anything else can read the object.
	Encode(obj runtime.Object) ([]byte, error)
	// Decode returns a new object decoded from data, equal to the object
	// data was encoded from (resourceVersion included).
	Decode(data []byte) (runtime.Object, error)
}

// decoder is a cache's Codec with what it needs to turn a weak pointer
// back into an object.
type decoder struct {
	codec Codec
	// typ is the pointer type of the first object stored; only objects of
	// that type get a weak pointer (a cache almost always holds one type).
	typ atomic.Pointer[reflect.Type]
}

// element builds the element of obj for a cache with a Codec.
func (d *decoder) element(key string, obj runtime.Object, rv uint64, l labels.Set, f Fields) (*Element, error) {
	raw, err := d.codec.Encode(obj)
	if err != nil {
		return nil, fmt.Errorf("watchcache: encoding %q: %w", key, err)
	}
	el := &Element{Key: key, RV: rv, Labels: l, Fields: f, raw: raw, dec: d}
	el.pointAt(obj)
	return el, nil
}

// pointAt makes e's weak pointer point at obj, decoded from e.
func (e *Element) pointAt(obj runtime.Object) {
	if p, ok := e.dec.dataPointer(obj); ok {
		w := weak.Make(p)
		e.hot.Store(&w)
	}
}

// dataPointer returns the address obj points at, if obj is a non-nil
// pointer of the decoder's type to a value that is not zero-sized.
func (d *decoder) dataPointer(obj runtime.Object) (*byte, bool) {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Type().Elem().Size() == 0 {
		return nil, false
	}
	t := v.Type()
	known := d.typ.Load()
	if known == nil {
		d.typ.CompareAndSwap(nil, &t)
		known = d.typ.Load()
	}
	if *known != t {
		return nil, false
	}
	return (*byte)(v.UnsafePointer()), true
}

// rebuild returns the object p points at: an object of the decoder's type
// (see dataPointer).
func (d *decoder) rebuild(p *byte) runtime.Object {
	return reflect.NewAt((*d.typ.Load()).Elem(), unsafe.Pointer(p)).Interface().(runtime.Object)
}
