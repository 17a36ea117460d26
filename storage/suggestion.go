package storage

import "context"

// decodedSuggestionKey marks a context (see WithDecodedSuggestion).
type decodedSuggestionKey struct{}

// WithDecodedSuggestion returns ctx marked for a GuaranteedUpdate or Delete
// whose cachedExistingObject is the storage's own decoding of the value it
// stores at the object's resourceVersion, unchanged since (a copy of what a
// cache fed by that storage's list and watch holds). Where such a storage
// would decode that same value again to fill the destination (an update
// that turns out to be a no-op, the last state of a delete), it may copy
// the suggestion instead: the copy is what the decoding would give.
// Storages that do not know the mark ignore it.
func WithDecodedSuggestion(ctx context.Context) context.Context {
	return context.WithValue(ctx, decodedSuggestionKey{}, true)
}

// IsDecodedSuggestion reports whether ctx carries WithDecodedSuggestion's mark.
func IsDecodedSuggestion(ctx context.Context) bool {
	marked, _ := ctx.Value(decodedSuggestionKey{}).(bool)
	return marked
}
