package watchcache

import (
	"time"

	"k8s.io/apimachinery/pkg/watch"
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
}

// Key returns the event's key.
func (e *Event) Key() string { return e.Cur.Key }
