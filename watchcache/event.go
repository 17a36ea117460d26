package watchcache

import (
	"sync/atomic"
	"time"
	"weak"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/storage"
)

// Event is one recorded change. For Deleted, Object is the last state
// stamped with the deletion RV and Prev is the element that was removed.
type Event struct {
	// Type is watch.Added, watch.Modified or watch.Deleted.
	Type watch.EventType
	// RV is the revision of the change.
	RV uint64
	// Cur is the element after the change (for Deleted: the last state).
	Cur *Element
	// Prev is the element before the change; nil for Added.
	Prev *Element
	// Time is when the cache recorded the event.
	Time time.Time

	// encodings points weakly at the encodings of Cur's object that the
	// watchers of this change share (see Encodings).
	encodings atomic.Pointer[weak.Pointer[storage.Encodings]]
}

// Key returns the event's key.
func (e *Event) Key() string { return e.Cur.Key }

// Encodings returns the encodings of Cur's object shared by every watcher
// the change is delivered to: every caller gets the same Encodings while
// any caller still holds it. The event only points at them weakly, so
// the history keeps no encodings alive; a caller after they were
// collected gets new ones (and encodes again). In a cache with a Codec
// that names its format, they start with Cur's encoding in that format.
func (e *Event) Encodings() *storage.Encodings {
	for {
		old := e.encodings.Load()
		if old != nil {
			if enc := old.Value(); enc != nil {
				return enc
			}
		}
		enc := e.Cur.Encodings()
		wp := weak.Make(enc)
		if e.encodings.CompareAndSwap(old, &wp) {
			return enc
		}
	}
}
