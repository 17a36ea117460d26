package reflector

// ResourceEventHandler receives notifications about objects of type T from a
// SharedIndexInformer. Calls for one handler are made from one goroutine, in
// order; the informer's store already reflects the change when they run.
// Handlers must not modify the objects they receive.
type ResourceEventHandler[T any] interface {
	// OnAdd is called for a new object; isInInitialList is true for objects
	// of the initial list (and for the replay a late-added handler gets).
	OnAdd(obj T, isInInitialList bool)
	// OnUpdate is called for a changed object, and on resync with old == new.
	OnUpdate(oldObj, newObj T)
	// OnDelete is called for a deleted object. finalStateUnknown is true when
	// the deletion was inferred from a relist ("deleted, final state
	// unknown"): obj is then the last state the informer knew.
	OnDelete(obj T, finalStateUnknown bool)
}

// ResourceEventHandlerFuncs adapts functions to a ResourceEventHandler; nil
// functions are skipped.
type ResourceEventHandlerFuncs[T any] struct {
	AddFunc    func(obj T, isInInitialList bool)
	UpdateFunc func(oldObj, newObj T)
	DeleteFunc func(obj T, finalStateUnknown bool)
}

// OnAdd implements ResourceEventHandler.
func (f ResourceEventHandlerFuncs[T]) OnAdd(obj T, isInInitialList bool) {
	if f.AddFunc != nil {
		f.AddFunc(obj, isInInitialList)
	}
}

// OnUpdate implements ResourceEventHandler.
func (f ResourceEventHandlerFuncs[T]) OnUpdate(oldObj, newObj T) {
	if f.UpdateFunc != nil {
		f.UpdateFunc(oldObj, newObj)
	}
}

// OnDelete implements ResourceEventHandler.
func (f ResourceEventHandlerFuncs[T]) OnDelete(obj T, finalStateUnknown bool) {
	if f.DeleteFunc != nil {
		f.DeleteFunc(obj, finalStateUnknown)
	}
}

// ResourceEventHandlerRegistration is the handle AddEventHandler returns for
// one handler. Implementations may offer more (removal goes through the
// informer's RemoveEventHandler).
type ResourceEventHandlerRegistration interface {
	// HasSynced reports whether the handler has been delivered every object
	// of the informer's initial list (or of its replay, for a late handler).
	HasSynced() bool
}
