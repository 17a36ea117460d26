package watchcache

import (
	"fmt"
	"reflect"
	"slices"
	"sync/atomic"
	"unsafe"
	"weak"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
)

// Element is one object of the current state with the attributes used to
// filter it. Elements are immutable once stored, but for the weak pointer
// to their decoded object described below.
//
// A cache without a Codec keeps each element's decoded object. A cache
// with one keeps its encoding instead, and a weak pointer to the newest
// decoded object (at first, for an element from a watch event, the object
// the cache was given; elements from a list have none until read): Object returns
// that object while anything else still references it, and otherwise
// decodes a new one and points at it. Readers at the same time share one
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
	hot atomic.Pointer[weak.Pointer[byte]]
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
	if h := e.hot.Load(); h != nil {
		if p := h.Value(); p != nil {
			return dec.rebuild(p), nil
		}
	}
	obj, err := dec.codec.Decode(unsafe.Slice(unsafe.StringData(e.raw), len(e.raw)), e.RV)
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
	return unsafe.Slice(unsafe.StringData(e.raw), len(e.raw)), ok
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

// decoder is a cache's Codec with what it needs to turn a weak pointer
// back into an object.
type decoder struct {
	codec Codec
	// typ is the pointer type of the first object stored; only objects of
	// that type get a weak pointer (a cache almost always holds one type).
	typ atomic.Pointer[reflect.Type]
}

// element builds the element of obj for a cache with a Codec; with hot,
// the element points weakly at obj, which must then be an allocation of
// its own (as a decoded watch event's object is), not an item of a list's
// slice. The
// encoding, the key and the field values share one allocation when the
// allocator's size classes make that no larger than three; the encoding is
// copied to an allocation of its own size either way.
func (d *decoder) element(key string, obj runtime.Object, rv uint64, l labels.Set, f fields.Set, hot bool) (*Element, error) {
	enc, err := d.codec.Encode(obj)
	if err != nil {
		return nil, fmt.Errorf("watchcache: encoding %q: %w", key, err)
	}
	names := internFieldNames(f)
	nVals := names.valuesLen(f)
	el := &Element{RV: rv, Labels: l, val: d}
	if allocSize(len(enc)+len(key)+nVals) <= allocSize(len(enc))+allocSize(len(key))+allocSize(nVals) {
		buf := make([]byte, 0, len(enc)+len(key)+nVals)
		buf = append(buf, enc...)
		buf = append(buf, key...)
		buf = names.appendValues(buf, f)
		nEnc, nKey := len(enc), len(enc)+len(key)
		el.raw, el.Key = bytesString(buf[:nEnc]), bytesString(buf[nEnc:nKey])
		el.Fields = Fields{names: names, vals: bytesString(buf[nKey:])}
	} else {
		el.raw, el.Key = string(enc), key
		vals := names.appendValues(make([]byte, 0, nVals), f)
		el.Fields = Fields{names: names, vals: bytesString(vals)}
	}
	if hot {
		el.pointAt(d, obj)
	}
	return el, nil
}

// sizeClasses are the Go allocator's size classes up to 32 KiB (see
// runtime/sizeclasses.go); larger objects take whole 8 KiB pages.
var sizeClasses = [...]int{8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240,
	256, 288, 320, 352, 384, 416, 448, 480, 512, 576, 640, 704, 768, 896, 1024, 1152, 1280, 1408,
	1536, 1792, 2048, 2304, 2688, 3072, 3200, 3456, 4096, 4864, 5376, 6144, 6528, 6784, 6912, 8192,
	9472, 9728, 10240, 10880, 12288, 13568, 14336, 16384, 18432, 19072, 20480, 21760, 24576, 27264,
	28672, 32768}

// allocSize is the memory an allocation of n bytes takes. It only steers
// the layout of encoded elements; an outdated table costs memory, never
// correctness.
func allocSize(n int) int {
	if n == 0 {
		return 0
	}
	if n > sizeClasses[len(sizeClasses)-1] {
		const page = 8 << 10
		return (n + page - 1) / page * page
	}
	i, _ := slices.BinarySearch(sizeClasses[:], n)
	return sizeClasses[i]
}

// bytesString returns b as a string without copying; b must never change.
func bytesString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// pointAt makes e's weak pointer point at obj, decoded from e.
func (e *Element) pointAt(d *decoder, obj runtime.Object) {
	if p, ok := d.dataPointer(obj); ok {
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
