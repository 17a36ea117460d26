package watcher

import (
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/cacher/internal/hub"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/watchcache"
)

// carry returns obj, the object a watcher delivers for element el of
// change ev (nil for an initial event), as the watcher's client asked:
// as it is (Watch), or wrapped with its encodings (WatchEncoded). Every
// watcher of a change shares the change's encodings of its current
// object, and the dispatcher's watchers (shared not nil) the wrapper too;
// an object of its own (the previous state stamped with the change's RV)
// and an initial event's object get encodings of their own, seeded with
// the cached encoding when it is the object's.
func (w *Watcher) carry(ev *watchcache.Event, el *watchcache.Element, obj runtime.Object, shared *hub.Wrappers) runtime.Object {
	if !w.Encoded {
		return obj
	}
	switch {
	case ev != nil && el == ev.Cur && shared != nil:
		return shared.Get(ev, obj)
	case ev != nil && el == ev.Cur:
		return &storage.EncodedObject{Object: obj, Encodings: ev.Encodings()}
	case ev == nil:
		return &storage.EncodedObject{Object: obj, Encodings: el.Encodings()}
	default:
		return &storage.EncodedObject{Object: obj, Encodings: storage.NewEncodings("", nil)}
	}
}
