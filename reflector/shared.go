package reflector

// SharedInformer is what code that reads one resource through a shared
// informer uses: the indexed store, handlers, and whether the initial
// list has landed. *SharedIndexInformer[T] implements it, and so does the
// typed view of a manager cache's informer (cache.InformerOf), so code
// written against SharedInformer[T] runs on an informer of its own or on
// the one a manager already runs for the kind.
//
// Objects it hands out (store, index, handlers) are shared by every user
// of the informer: read them, never modify them.
type SharedInformer[T any] interface {
	// GetStore returns the informer's store (the same as GetIndexer).
	GetStore() Store[T]
	// GetIndexer returns the informer's indexed store.
	GetIndexer() Indexer[T]
	// AddIndexers adds indexes, indexing the objects already stored.
	AddIndexers(Indexers[T]) error
	// AddEventHandler registers h (see SharedIndexInformer.AddEventHandler).
	AddEventHandler(h ResourceEventHandler[T]) (ResourceEventHandlerRegistration, error)
	// RemoveEventHandler removes a handler AddEventHandler registered.
	RemoveEventHandler(ResourceEventHandlerRegistration) error
	// HasSynced reports whether the initial list has been stored.
	HasSynced() bool
	// LastSyncResourceVersion returns the RV of the last list or event
	// the informer's reflector saw.
	LastSyncResourceVersion() string
}

var _ SharedInformer[Object] = (*SharedIndexInformer[Object])(nil)
