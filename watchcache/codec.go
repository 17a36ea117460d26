package watchcache

import "k8s.io/apimachinery/pkg/runtime"

// RuntimeCodec adapts an apimachinery codec, such as the one the storage
// encodes objects with, to Codec.
type RuntimeCodec struct {
	// Codec encodes and decodes the cached objects.
	Codec runtime.Codec
	// New returns an empty object to decode into (a cacher's NewFunc).
	New func() runtime.Object
}

// Encode returns obj's encoding by the codec.
func (c RuntimeCodec) Encode(obj runtime.Object) ([]byte, error) {
	return runtime.Encode(c.Codec, obj)
}

// Decode returns a new object decoded from data by the codec.
func (c RuntimeCodec) Decode(data []byte) (runtime.Object, error) {
	obj, _, err := c.Codec.Decode(data, nil, c.New())
	return obj, err
}
