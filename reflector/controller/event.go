package controller

// CreateEvent is an object the informer has added.
type CreateEvent[T any] struct {
	Object T
	// IsInInitialList is true for objects of the informer's initial list
	// (or of the replay a handler added late receives).
	IsInInitialList bool
}

// UpdateEvent is an object the informer has seen change. On a resync
// ObjectOld and ObjectNew are the same object.
type UpdateEvent[T any] struct {
	ObjectOld, ObjectNew T
}

// DeleteEvent is an object the informer has seen deleted.
type DeleteEvent[T any] struct {
	Object T
	// DeleteStateUnknown is true when the deletion was inferred from a
	// relist: Object is then the last state the informer knew.
	DeleteStateUnknown bool
}
