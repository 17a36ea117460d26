package storage

// TransformerObserver is implemented by storages whose value transformer can
// be replaced while they serve (encryption keys rotated, an encryption
// configuration reloaded). Values that read one way through the old
// transformer may read differently, or not at all, through the new one, so a
// cache of decoded objects registers here to revalidate its content: without
// that it would go on serving objects the storage can no longer read.
type TransformerObserver interface {
	// OnTransformerChange registers fn to be called after every replacement,
	// before the call that replaced the transformer returns. fn must not
	// block. The returned function unregisters fn.
	OnTransformerChange(fn func()) (unregister func())
}
