package cacher

import (
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/listwatch/listwatch/cacher/internal/hub"
	"github.com/listwatch/listwatch/cacher/internal/watcher"
	"github.com/listwatch/listwatch/storage"
)

// Corrupt objects. A value the storage cannot decode (written behind its
// back, a lost encryption key, a disk error) must not take the resource
// down: the cacher's list reads around it (feed_listpages.go), the cache holds
// every other object and becomes ready, and the corrupt keys are
// remembered here until a relist no longer finds them or a readable value
// is written over them. Whatever would have to show such an object is
// handed to the storage, which names the corrupt keys as Kubernetes does
// (a 500 StoreReadError with one cause per key): a list, or a watch with
// initial events, whose scope holds a corrupt key, and a Get of one.
// Everything else is served from the cache as usual. The cache never
// invents an event for a corrupt key: a watcher sees it only when the
// storage gives a readable value (an ADDED or MODIFIED) or, for the unsafe
// delete of the corrupt value, the storage's own StoreReadError.
//
// The keys of objects the storage reads back but the cache cannot hold
// (feed_uncacheable.go) join the same set: reads whose scope holds one
// are served by the storage, which returns them as they are.
//
// corruptKeys is the sorted set, replaced whole (copy on write).

// setCorrupt replaces the set of corrupt keys (sorted); inside the hub's commit or
// the reflector's goroutine.
func (f *feed) setCorrupt(keys []string) {
	if len(keys) == 0 {
		f.corruptKeys.Store(nil)
		return
	}
	f.corruptKeys.Store(&keys)
}

// corruptIn returns the corrupt keys a read of prefix would meet: the keys
// below it when recursive (prefix ends in "/", see listPrefix), else prefix
// itself.
func (f *feed) corruptIn(prefix string, recursive bool) []string {
	p := f.corruptKeys.Load()
	if p == nil {
		return nil
	}
	keys := *p
	if !recursive {
		if _, ok := slices.BinarySearch(keys, prefix); ok {
			return []string{prefix}
		}
		return nil
	}
	i, _ := slices.BinarySearch(keys, prefix)
	j := i
	for j < len(keys) && strings.HasPrefix(keys[j], prefix) {
		j++
	}
	return keys[i:j]
}

// readableAgain drops key from the corrupt keys: the storage gave a
// readable value for it (inside the hub's commit).
func (f *feed) readableAgain(key string) {
	p := f.corruptKeys.Load()
	if p == nil {
		return
	}
	i, ok := slices.BinarySearch(*p, key)
	if !ok {
		return
	}
	f.log.Info("cacher: a corrupt object is readable again", "key", key)
	f.setCorrupt(slices.Delete(slices.Clone(*p), i, i+1))
}

// isCorruptDeletion reports whether a storage watch error says that an
// object whose value could not be read was deleted (the unsafe delete):
// Kubernetes' StoreReadError, which the etcd3 store's watch gives for it.
func isCorruptDeletion(err error) bool {
	return apierrors.IsStoreReadError(err)
}

// lostToCorruption returns the keys of corrupt that the cache holds a
// readable object for (inside the hub's commit): objects its watchers may have
// seen, which can no longer be read (a transformer lost its key, a value
// was overwritten behind the storage's back).
func (f *feed) lostToCorruption(corrupt []string) []string {
	var lost []string
	for _, k := range corrupt {
		if _, _, ok, err := f.cache.Get(k); err == nil && ok {
			lost = append(lost, k)
		}
	}
	return lost
}

// endWatchesOf ends every open watch whose scope holds one of the keys
// lost to corruption with the storage's StoreReadError naming them, so
// that its client does not go on with a state that cannot be read back
// (inside the hub's commit).
func (f *feed) endWatchesOf(tx hub.Tx, lost []string, rv uint64) {
	if len(lost) == 0 {
		return
	}
	f.log.Error("cacher: objects the cache held cannot be read any more; ending the watches that cover them",
		"prefix", f.prefix, "rv", rv, "keys", strings.Join(lost, ", "))
	f.endWatches(tx, lost, rv, "objects stored in the watch's scope can no longer be decoded")
}

// endWatches ends every open watch whose scope holds one of keys with a
// CodeCorruptObj error naming those keys and saying msg (inside the hub's
// commit).
func (f *feed) endWatches(tx hub.Tx, keys []string, rv uint64, msg string) {
	if len(keys) == 0 {
		return
	}
	tx.AbortOpen(func(w *hub.Spec) error {
		var in []string
		for _, k := range keys {
			if w.InScope(k) {
				in = append(in, k)
			}
		}
		if len(in) == 0 {
			return nil
		}
		return fmt.Errorf("%w: %w", watcher.ErrReinitialized, &storage.Error{Code: storage.CodeCorruptObj, Key: in[0],
			CorruptKeys: in, Msg: fmt.Sprintf("%s at resource version %d; list again", msg, rv)})
	})
}
