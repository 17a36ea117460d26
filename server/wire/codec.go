package wire

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// Codec encodes unstructured objects of one Kind as the server writes
// them, apiVersion and kind included, and names that format
// (storage.FormatNamer): a cacher built with it keeps each object as
// those bytes, which the server copies into lists and watch lines.
type Codec struct{ kind *Kind }

// NewCodec returns the Codec of the objects of k.
func NewCodec(k *Kind) *Codec { return &Codec{kind: k} }

// Encode returns the JSON the server writes for obj.
func (c *Codec) Encode(obj runtime.Object) ([]byte, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("server: cache codec: %T is not *unstructured.Unstructured", obj)
	}
	return c.kind.AppendObject(nil, u)
}

// Decode returns a new unstructured object decoded from data, which
// carries its resourceVersion.
func (c *Codec) Decode(data []byte, _ uint64) (runtime.Object, error) {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		return nil, err
	}
	return u, nil
}

// Format implements storage.FormatNamer: the server's JSON of the
// resource's group, version and kind.
func (c *Codec) Format() string { return c.kind.object }
