package bench

import (
	"context"

	"github.com/listwatch/listwatch/storage"
)

// newCache starts a cacher over backend and waits until it has loaded the
// objects. It returns a nil store while the cacher package is not available.
func newCache(ctx context.Context, backend storage.Interface) (storage.Interface, func(), error) {
	return nil, nil, nil
}
