package server

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/listwatch/watchcache"
)

// CacheCodec returns the codec for a cacher that stores the objects of r
// (cacher.Config.Codec): it keeps each object as the JSON this server writes
// for it, apiVersion and kind included. The server then writes lists served
// from that cache by copying the cached bytes, with no decoding and no
// encoding per item, and the cache holds about the encoded size per object.
func CacheCodec(r Resource) watchcache.Codec {
	rr := &resource{Resource: r, gv: schema.GroupVersion{Group: r.Group, Version: r.Version}}
	rr.gvString = rr.gv.String()
	return &cacheCodec{res: rr}
}

// cacheCodec encodes unstructured objects as appendObject does.
type cacheCodec struct{ res *resource }

// Encode returns the JSON the server writes for obj.
func (c *cacheCodec) Encode(obj runtime.Object) ([]byte, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("server: cache codec: %T is not *unstructured.Unstructured", obj)
	}
	return appendObject(nil, u, c.res)
}

// Decode returns a new unstructured object decoded from data, which
// carries its resourceVersion.
func (c *cacheCodec) Decode(data []byte, _ uint64) (runtime.Object, error) {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(data); err != nil {
		return nil, err
	}
	return u, nil
}

// servesAs reports whether the codec writes r's objects as r's handlers would.
func (c *cacheCodec) servesAs(r *resource) bool {
	return c.res.gvString == r.gvString && c.res.Kind == r.Kind
}
