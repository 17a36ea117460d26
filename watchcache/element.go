package watchcache

import (
	"fmt"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/watchcache/internal/pack"
)

// Element is one object of the current state with the attributes used to
// filter it. Elements are immutable once stored, but for the weak pointer
// to their decoded object described below.
//
// A cache without a Codec keeps each element's decoded object. A cache
// with one keeps its encoding instead, and (unless Config.NoPacking) a
// weak pointer to the newest decoded object (at first, for an element
// from a watch event, the object the cache was given; elements from a
// list have none until read): Object returns that object while anything
// else still references it, and otherwise decodes a new one and points
// at it. Readers at the same time share one
// object; an element nobody reads costs its encoding only. Its key and
// field values then live in the encoding's allocation: whoever keeps the
// key beyond the element keeps that allocation too.
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

	// val is the decoded object (a runtime.Object) in caches without a
	// Codec, and the *decoder of raw in caches with one. One field for
	// both keeps an element at 96 bytes.
	val any
	// raw is the object's encoding (caches with a Codec).
	raw string
	// hot points weakly at the newest object decoded from raw (or raw
	// was encoded from); the only field that changes after the element
	// is stored.
	hot atomic.Pointer[pack.Ref]
}

// NewElement returns an element holding obj decoded, as a cache without a
// Codec stores it. It is meant for tests and for callers that build
// elements to filter.
func NewElement(key string, obj runtime.Object, rv uint64, l labels.Set, f Fields) *Element {
	return &Element{Key: key, val: obj, RV: rv, Labels: l, Fields: f}
}

// Object returns the element's object, which callers must not modify.
// With a Codec it may be a fresh decoding of the element; the error is
// then a decoding error (which means the Codec cannot read its own
// output).
func (e *Element) Object() (runtime.Object, error) {
	dec, ok := e.val.(*decoder)
	if !ok {
		obj, _ := e.val.(runtime.Object)
		return obj, nil
	}
	if r := e.hot.Load(); r != nil {
		if obj := dec.packer.Held(r); obj != nil {
			return obj, nil
		}
	}
	obj, err := dec.codec.Decode(pack.Bytes(e.raw), e.RV)
	if err != nil {
		return nil, fmt.Errorf("watchcache: decoding %q: %w", e.Key, err)
	}
	e.pointAt(dec, obj)
	return obj, nil
}

// Encoded returns the element's encoding by the cache's Codec, which
// callers must not modify, and false when the cache keeps decoded objects.
func (e *Element) Encoded() ([]byte, bool) {
	_, ok := e.val.(*decoder)
	return pack.Bytes(e.raw), ok
}

// Codec encodes the objects of a cache that keeps them encoded, and decodes
// them on read. Both methods must be safe for concurrent use.
type Codec interface {
	// Encode returns obj's encoding. The cache calls it once per stored
	// object, before anything else can read the object.
	Encode(obj runtime.Object) ([]byte, error)
	// Decode returns a new object decoded from data, equal to the object
	// data was encoded from, with rv as its resourceVersion (a codec whose
	// encodings leave the resourceVersion out sets it from rv).
	Decode(data []byte, rv uint64) (runtime.Object, error)
}

// decoder is a cache's Codec with the packer that lays out its elements
// and refers weakly to their decoded objects.
type decoder struct {
	codec  Codec
	packer pack.Packer
}

// element builds the element of obj for a cache with a Codec; with hot,
// the element points weakly at obj, which must then be an allocation of
// its own (as a decoded watch event's object is), not an item of a list's
// slice. The packer lays out the encoding, the key and the field values.
func (d *decoder) element(key string, obj runtime.Object, rv uint64, l labels.Set, f fields.Set, hot bool) (*Element, error) {
	enc, err := d.codec.Encode(obj)
	if err != nil {
		return nil, fmt.Errorf("watchcache: encoding %q: %w", key, err)
	}
	fs := NewFields(f)
	el := &Element{RV: rv, Labels: l, val: d}
	el.raw, el.Key, fs.vals = d.packer.Layout(enc, key, fs.vals)
	el.Fields = fs
	if hot {
		el.pointAt(d, obj)
	}
	return el, nil
}

// pointAt makes e's weak pointer point at obj, decoded from e.
func (e *Element) pointAt(d *decoder, obj runtime.Object) {
	if r := d.packer.Hold(obj); r != nil {
		e.hot.Store(r)
	}
}
