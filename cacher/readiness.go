package cacher

import (
	"fmt"

	"github.com/listwatch/listwatch/storage"
)

// explainNotReady turns err, a wait for the first list that ended, into
// the storage's own readiness error when the storage is what keeps the
// cache from initialising (for the etcd3 store: ErrUnavailable naming the
// endpoints and the last dial error, 503), wrapped so that it says which
// cache; any other err is returned as is.
func (f *feed) explainNotReady(err error) error {
	if !storage.IsCode(err, storage.CodeNotReady) {
		return err
	}
	if serr := f.store.ReadinessCheck(); serr != nil {
		return fmt.Errorf("the watch cache of %s is not initialized: %w", f.prefix, serr)
	}
	return err
}
