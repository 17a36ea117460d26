package watchcache

import (
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/storage"
)

// RuntimeCodec adapts an apimachinery codec, such as the one the storage
// encodes objects with, to Codec.
type RuntimeCodec struct {
	// Codec encodes and decodes the cached objects.
	Codec runtime.Codec
	// New returns an empty object to decode into (a cacher's NewFunc).
	New func() runtime.Object
	// Versioner, when set, leaves the resourceVersion out of encodings
	// (as the storage does), setting it again on decoding: the element
	// holds it already, and its digits can push an encoding into a larger
	// allocation. Encoding then copies the object first. nil encodes the
	// object as it is.
	Versioner storage.Versioner
}

// Encode returns obj's encoding by the codec.
func (c RuntimeCodec) Encode(obj runtime.Object) ([]byte, error) {
	if c.Versioner != nil {
		obj = obj.DeepCopyObject()
		if err := c.Versioner.UpdateObject(obj, 0); err != nil {
			return nil, err
		}
	}
	return runtime.Encode(c.Codec, obj)
}

// Decode returns a new object decoded from data by the codec, with rv as
// its resourceVersion when the codec leaves it out.
func (c RuntimeCodec) Decode(data []byte, rv uint64) (runtime.Object, error) {
	obj, _, err := c.Codec.Decode(data, nil, c.New())
	if err != nil || c.Versioner == nil {
		return obj, err
	}
	return obj, c.Versioner.UpdateObject(obj, rv)
}

// Encodings returns new encodings of the element's object, holding its
// encoding when the cache keeps one by a Codec that names its format
// (storage.FormatNamer).
func (e *Element) Encodings() *storage.Encodings {
	if dec, ok := e.val.(*decoder); ok {
		if f, ok := dec.codec.(storage.FormatNamer); ok {
			raw, _ := e.Encoded()
			return storage.NewEncodings(f.Format(), raw)
		}
	}
	return storage.NewEncodings("", nil)
}
