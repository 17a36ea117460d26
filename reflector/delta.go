package reflector

// DeltaType is the kind of change a Delta records.
type DeltaType string

// The delta types.
const (
	// Added: the object appeared in a watch.
	Added DeltaType = "Added"
	// Updated: the object changed in a watch.
	Updated DeltaType = "Updated"
	// Deleted: the object was deleted in a watch, or (FinalStateUnknown)
	// found missing by a relist.
	Deleted DeltaType = "Deleted"
	// Replaced: the object is part of a relist (Replace).
	Replaced DeltaType = "Replaced"
	// Sync: a periodic resync of a known object.
	Sync DeltaType = "Sync"
)

// Delta is one change to one object.
type Delta[T any] struct {
	// Type is the kind of change.
	Type DeltaType
	// Object is the new state; for Deleted it is the last known state.
	Object T
	// FinalStateUnknown is set on Deleted deltas inferred from a relist:
	// the deletion itself was missed and Object is the last state known,
	// which may be stale.
	FinalStateUnknown bool
}

// Deltas are the pending changes of one key, oldest first.
type Deltas[T any] []Delta[T]

// Oldest returns the oldest delta, or false for an empty list.
func (d Deltas[T]) Oldest() (Delta[T], bool) {
	if len(d) == 0 {
		return Delta[T]{}, false
	}
	return d[0], true
}

// Newest returns the newest delta, or false for an empty list.
func (d Deltas[T]) Newest() (Delta[T], bool) {
	if len(d) == 0 {
		return Delta[T]{}, false
	}
	return d[len(d)-1], true
}

// dedupDeltas merges two consecutive deletions at the end of d into one,
// keeping the one that carries a known final state.
func dedupDeltas[T any](d Deltas[T]) Deltas[T] {
	n := len(d)
	if n < 2 {
		return d
	}
	a, b := &d[n-1], &d[n-2]
	if a.Type != Deleted || b.Type != Deleted {
		return d
	}
	keep := *b
	if b.FinalStateUnknown {
		keep = *a
	}
	d[n-2] = keep
	var zero Delta[T]
	d[n-1] = zero
	return d[:n-1]
}
