package history

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/storage"
)

// Revision gathers the events of one storage revision from a storage
// watch until the revision is known complete: a later revision starts, a
// bookmark at or after it arrives (the storage marks revision ends with
// one, see storage.RevisionEndAnnotationKey), or the stream pauses. Every
// reader of a storage stream gathers revisions with it (the feed's own
// watch, the shared reads of history), so
// that a revision is applied or delivered whole, never half: an error in
// the middle of one (etcd compacted it while the stream replayed it)
// leaves nothing of it behind.
type Revision struct {
	// RV is the revision gathered; Events its events so far, and Keys
	// their keys (as the reader gave them, "" when it keeps none).
	RV     uint64
	Events []watch.Event
	Keys   []string
}

// Pause is the pause in a storage stream after which a gathered revision
// is complete: etcd delivers a revision's events together.
const Pause = 50 * time.Millisecond

// Empty reports whether nothing is gathered.
func (r *Revision) Empty() bool { return len(r.Events) == 0 }

// Ends reports whether a gathered revision is complete once an event or
// bookmark at rv arrives: rv starts a later revision (an event) or
// promises it (a bookmark at or after it).
func (r *Revision) Ends(rv uint64, bookmark bool) bool {
	if r.Empty() {
		return false
	}
	if bookmark {
		return rv >= r.RV
	}
	return rv != r.RV
}

// Add gathers ev, of revision rv, with its key ("" when the reader keeps
// none). The caller first takes a gathered revision that rv ends (Ends).
func (r *Revision) Add(ev watch.Event, rv uint64, key string) {
	r.RV = rv
	r.Events = append(r.Events, ev)
	r.Keys = append(r.Keys, key)
}

// Reset drops what is gathered, keeping the memory.
func (r *Revision) Reset() {
	clear(r.Events)
	r.Events, r.Keys = r.Events[:0], r.Keys[:0]
}

// IsEnd reports whether a bookmark marks the end of a revision.
func IsEnd(obj runtime.Object) bool {
	a, err := meta.Accessor(obj)
	return err == nil && a.GetAnnotations()[storage.RevisionEndAnnotationKey] == "true"
}
