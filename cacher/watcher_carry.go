package cacher

import (
	"k8s.io/apimachinery/pkg/runtime"

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
func (w *watcher) carry(ev *watchcache.Event, el *watchcache.Element, obj runtime.Object, shared *sharedWrappers) runtime.Object {
	if !w.encoded {
		return obj
	}
	switch {
	case ev != nil && el == ev.Cur && shared != nil:
		return shared.get(ev, obj)
	case ev != nil && el == ev.Cur:
		return &storage.EncodedObject{Object: obj, Encodings: ev.Encodings()}
	case ev == nil:
		return &storage.EncodedObject{Object: obj, Encodings: el.Encodings()}
	default:
		return &storage.EncodedObject{Object: obj, Encodings: storage.NewEncodings("", nil)}
	}
}

// sharedWrappers are the wrappers of the current objects of the changes a
// dispatch round delivers (one event, or a flush's held events): one per
// change, shared by every encoded watcher the round delivers it to, so
// that a change costs one wrapper, not one per watcher. Owned by the
// registry (hub.mu held); reset at the end of each round.
type sharedWrappers struct {
	evs  []*watchcache.Event
	objs []*storage.EncodedObject
}

// get returns the wrapper of ev's current object obj, made on first use.
func (s *sharedWrappers) get(ev *watchcache.Event, obj runtime.Object) *storage.EncodedObject {
	for i, e := range s.evs {
		if e == ev {
			return s.objs[i]
		}
	}
	o := &storage.EncodedObject{Object: obj, Encodings: ev.Encodings()}
	s.evs = append(s.evs, ev)
	s.objs = append(s.objs, o)
	return o
}

// reset forgets the round's wrappers.
func (s *sharedWrappers) reset() {
	clear(s.evs)
	clear(s.objs)
	s.evs, s.objs = s.evs[:0], s.objs[:0]
}
