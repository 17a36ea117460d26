package watchcache

import (
	"fmt"

	"github.com/listwatch/listwatch/storage"
)

// TooOldError reports that the events or state after Requested are no
// longer all held: the oldest RV the cache can serve from is Oldest. It
// matches errors.Is(err, storage.ErrGone).
type TooOldError struct {
	// Requested is the RV asked for.
	Requested uint64
	// Oldest is the oldest RV the cache can serve from.
	Oldest uint64
}

// Error implements error.
func (e *TooOldError) Error() string {
	return fmt.Sprintf("watchcache: too old resource version: %d (oldest %d)", e.Requested, e.Oldest)
}

// Is makes errors.Is(err, storage.ErrGone) true.
func (e *TooOldError) Is(target error) bool {
	t, ok := target.(*storage.Error)
	return ok && t.Code == storage.CodeGone
}

// StorageError converts e to a *storage.Error (410 Gone).
func (e *TooOldError) StorageError() *storage.Error {
	return storage.NewGoneError(int64(e.Requested), int64(e.Oldest))
}
