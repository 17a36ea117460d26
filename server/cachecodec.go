package server

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// CacheCodec returns the codec for a cacher that stores the objects of r
// (cacher.Config.Codec): it keeps each object as the JSON this server writes
// for it, apiVersion and kind included, and names that format
// (storage.FormatNamer). The server then writes lists served from that
// cache by copying the cached bytes, with no decoding and no encoding per
// item, makes its watch events' lines from them, and the cache holds about
// the encoded size per object.
func CacheCodec(r Resource) *JSONCodec {
	rr := &resource{Resource: r, gv: schema.GroupVersion{Group: r.Group, Version: r.Version}}
	rr.gvString = rr.gv.String()
	rr.wire = newWireFormats(rr.gvString, rr.Kind)
	return &JSONCodec{res: rr}
}

// JSONCodec encodes unstructured objects of one resource as the server
// writes them (see CacheCodec).
type JSONCodec struct{ res *resource }

// Encode returns the JSON the server writes for obj.
func (c *JSONCodec) Encode(obj runtime.Object) ([]byte, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("server: cache codec: %T is not *unstructured.Unstructured", obj)
	}
	return appendObject(nil, u, c.res)
}

// Decode returns a new unstructured object decoded from data, which
// carries its resourceVersion.
func (c *JSONCodec) Decode(data []byte, _ uint64) (runtime.Object, error) {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		return nil, err
	}
	return u, nil
}

// Format implements storage.FormatNamer: the server's JSON of the
// resource's group, version and kind.
func (c *JSONCodec) Format() string { return c.res.wire.object }
