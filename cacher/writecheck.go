package cacher

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/storage"
)

// Writes through the cacher of an object the cache could not hold at all
// (its KeyFunc or GetAttrs fails: no name) are refused with 422 Invalid,
// nothing written: it is a caller bug, and the cache would have to leave
// the object to the storage (see feed_uncacheable.go). An object whose
// metadata gives another key than the one it is written at is let through:
// Kubernetes' storage suite writes such objects through its cacher (keys
// like /pods//foo, an update of /pods/non-existing with the object
// test-ns/foo), and the consistency check reports what that does to the
// cache. The storage itself checks nothing, as Kubernetes' does not (its
// allocators store nameless objects at fixed keys, without a cache), and
// an object written behind the cacher's back is still handled.

// checkWritable returns a CodeInvalidObj error when the cache could not
// hold obj (a malformed key is left to the storage).
func (f *feed) checkWritable(key string, obj runtime.Object) error {
	if storage.ValidateKey(key, f.cfg.ResourcePrefix, false) != nil {
		return nil // the storage refuses the key itself
	}
	if err := f.uncacheable(obj); err != nil {
		return storage.NewInvalidObjError(key, fmt.Sprintf("the watch cache cannot hold this object (%v): "+
			"its metadata.name (and namespace) must give the key it is written at", err))
	}
	return nil
}

// checkedUpdate wraps tryUpdate so that an object checkWritable refuses is
// never written: the storage returns tryUpdate's error unchanged.
func (f *feed) checkedUpdate(key string, tryUpdate storage.UpdateFunc) storage.UpdateFunc {
	return func(in runtime.Object, m storage.ResponseMeta) (runtime.Object, *uint64, error) {
		out, ttl, err := tryUpdate(in, m)
		if err != nil {
			return out, ttl, err
		}
		if err := f.checkWritable(key, out); err != nil {
			return nil, nil, err
		}
		return out, ttl, nil
	}
}
