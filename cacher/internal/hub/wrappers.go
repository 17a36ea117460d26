package hub

import (
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/watchcache"
)

// Wrappers are the wrappers of the current objects of the changes a
// dispatch round delivers (one event, or a flush's held events): one per
// change, shared by every encoded watcher the round delivers it to, so
// that a change costs one wrapper, not one per watcher. Owned by the
// registry (Hub.mu held); reset at the end of each round.
type Wrappers struct {
	evs  []*watchcache.Event
	objs []*storage.EncodedObject
}

// Get returns the wrapper of ev's current object obj, made on first use.
func (s *Wrappers) Get(ev *watchcache.Event, obj runtime.Object) *storage.EncodedObject {
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
func (s *Wrappers) reset() {
	clear(s.evs)
	clear(s.objs)
	s.evs, s.objs = s.evs[:0], s.objs[:0]
}
