package cacher

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/cacher/internal/hub"
	"github.com/listwatch/listwatch/storage"
)

// Uncacheable objects. The cache keys an object by its metadata
// (Config.KeyFunc), the storage by the key it was written at. An object the
// KeyFunc or GetAttrs cannot handle (no name: a caller wrote it so, the
// storage does not check, as Kubernetes' does not) can be stored and read
// back, but not held by the cache. Such an object must not stop the feed:
// its revision is applied as a whole without it, so that the cache's RV
// advances and reads never stall on it. Its storage key is found with a
// keys-only range of that revision (storage.KeyVersionLister) and joins the
// corrupt keys (feed_corrupt.go): whatever would have to show it is served
// by the storage, which reads it back as it is. The watches whose scope
// holds the key end with an error (their clients list again, from the
// storage), as a watcher of the cache cannot get the event; nothing that
// looks like a deletion is sent. Each such key is logged and counted once by
// Metrics.DivergencePersists when found (see reportUncacheable): it is a
// key/metadata mismatch the cache cannot repair.

// locateTimeout bounds the keys-only read that finds uncacheable keys.
const locateTimeout = 30 * time.Second

// uncacheable returns why the cache cannot hold obj, nil when it can.
func (f *feed) uncacheable(obj runtime.Object) error {
	if _, err := f.cfg.KeyFunc(obj); err != nil {
		return fmt.Errorf("no cache key: %w", err)
	}
	if _, _, err := f.cfg.GetAttrs(obj); err != nil {
		return fmt.Errorf("no attributes: %w", err)
	}
	return nil
}

// uncacheableFound is what a revision or a list holds that the cache cannot:
// the storage keys of its objects, the known uncacheable keys that no
// longer exist, and why, for the log.
type uncacheableFound struct {
	keys []string // sorted
	gone []string // sorted
	why  []string
}

// locateUncacheable finds the storage keys, at revision rev, of objects the
// cache cannot hold, which were written at the revisions in badRVs: the keys
// below f.prefix last written at one of those revisions, less goodKeys (the
// cache keys of objects at those revisions it can hold: one etcd
// transaction may write several keys). It also finds which of the corrupt
// keys known so far no longer exist at rev (an uncacheable object was
// deleted).
func (f *feed) locateUncacheable(ctx context.Context, rev uint64, badRVs map[uint64]bool,
	goodKeys map[string]bool) (uncacheableFound, error) {
	lister, ok := f.store.(storage.KeyVersionLister)
	if !ok {
		return uncacheableFound{}, errors.New("the storage cannot list keys without their values; " +
			"objects the cache cannot key cannot be located")
	}
	ctx, cancel := context.WithTimeout(ctx, locateTimeout)
	defer cancel()
	known := f.knownCorrupt()
	present := make(map[string]bool, len(known))
	var found uncacheableFound
	err := lister.KeyVersions(ctx, f.prefix, int64(rev), func(kv storage.KeyVersion) error {
		if _, ok := slices.BinarySearch(known, kv.Key); ok {
			present[kv.Key] = true
		}
		if badRVs[kv.RV] && !goodKeys[kv.Key] {
			found.keys = append(found.keys, kv.Key)
		}
		return nil
	})
	if err != nil {
		return uncacheableFound{}, fmt.Errorf("locating objects the cache cannot hold at revision %d: %w", rev, err)
	}
	for _, k := range known {
		if !present[k] {
			found.gone = append(found.gone, k)
		}
	}
	return found, nil
}

// splitUncacheable separates, in place, the events the cache can hold
// (returned first) from those it cannot. When there are any of the latter it
// locates their keys at revision rv (see locateUncacheable).
func (f *feed) splitUncacheable(ctx context.Context, evs []watch.Event, rv uint64) ([]watch.Event, *uncacheableFound, error) {
	var why []string
	good := evs[:0]
	for _, e := range evs {
		if err := f.uncacheable(e.Object); err != nil {
			why = append(why, fmt.Sprintf("%s at resource version %d: %v", e.Type, rv, err))
			continue
		}
		good = append(good, e)
	}
	clear(evs[len(good):])
	if len(why) == 0 {
		return good, nil, nil
	}
	// Only now, in the rare revision that holds such an object, the keys
	// of the others (which the keys-only range also finds there).
	goodKeys := map[string]bool{}
	for _, e := range good {
		if k, err := f.cfg.KeyFunc(e.Object); err == nil {
			goodKeys[k] = true
		}
	}
	found, err := f.locateUncacheable(ctx, rv, map[uint64]bool{rv: true}, goodKeys)
	if err != nil {
		return good, nil, err
	}
	found.why = why
	return good, &found, nil
}

// markUncacheable records f inside the hub's commit, before the revision
// rv it was found in becomes visible: its keys join the corrupt keys, the
// keys that are gone leave them (a cached object still held at one is
// removed, it was stale), and every watch whose scope holds one of them
// ends. It returns the events of the removals, which the caller dispatches
// with the revision's.
func (f *feed) markUncacheable(tx hub.Tx, found *uncacheableFound, rv uint64) ([]watch.Event, error) {
	if found == nil {
		return nil, nil
	}
	f.reportUncacheable(found.keys, rv, "serving their keys from the storage and ending the watches that cover them",
		"gone", strings.Join(found.gone, ", "), "objects", strings.Join(found.why, "; "))
	affected := slices.Concat(found.keys, found.gone)
	f.endWatches(tx, affected, rv, "objects stored in the watch's scope cannot be held by the watch cache "+
		"(their metadata does not give their key)")
	var stale []watch.Event
	for _, k := range found.gone {
		el, _, ok, err := f.cache.Get(k)
		if err != nil || !ok {
			continue
		}
		obj, err := el.Object()
		if err != nil {
			return nil, err
		}
		stale = append(stale, watch.Event{Type: watch.Deleted, Object: obj})
	}
	next := slices.DeleteFunc(slices.Concat(f.knownCorrupt(), found.keys), func(k string) bool {
		_, gone := slices.BinarySearch(found.gone, k)
		return gone
	})
	slices.Sort(next)
	f.setCorrupt(slices.Compact(next))
	return stale, nil
}

// knownCorrupt returns the corrupt keys, sorted (see feed_corrupt.go).
func (f *feed) knownCorrupt() []string {
	if p := f.corruptKeys.Load(); p != nil {
		return *p
	}
	return nil
}

// reportUncacheable logs keys of objects the cache cannot hold, found at
// revision rv, and doing what it says. Keys new to the corrupt keys are an
// error, counted once by Metrics.DivergencePersists (one occurrence: they
// persist until rewritten); keys already known are logged at Info, so that a
// writer updating such an object does not flood the log.
func (f *feed) reportUncacheable(keys []string, rv uint64, doing string, attrs ...any) {
	known := f.knownCorrupt()
	fresh := slices.ContainsFunc(keys, func(k string) bool {
		_, ok := slices.BinarySearch(known, k)
		return !ok
	})
	level := slog.LevelInfo
	if fresh {
		level = slog.LevelError
		f.cfg.Metrics.DivergencePersists()
	}
	f.log.Log(context.Background(), level, "cacher: the storage holds objects the cache cannot hold "+
		"(their metadata does not give their key); "+doing,
		append([]any{"prefix", f.prefix, "rv", rv, "keys", strings.Join(keys, ", ")}, attrs...)...)
}
