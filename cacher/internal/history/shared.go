// Package history holds the histories a watcher of the cacher replays
// besides the cache's own ring: shared reads of the storage's history,
// each applied to a cache of its own, so that many watchers catch up
// through one storage stream.
package history

import (
	"sync/atomic"

	"github.com/listwatch/listwatch/watchcache"
)

// Shared is the storage's history between two revisions (from, until),
// applied to a cache of its own that held the state at from: a fork of a
// state the cacher replaced (after a relist), or a list at from (for
// watchers that fell out of the cache's history). The cacher's feed fills
// it from one storage stream; watchers replay it, each filtered by its own
// predicate as live events are.
type Shared struct {
	// Cache holds the state at From and the history after it, as far as
	// it has been read. Written by the goroutine that reads the storage.
	Cache       *watchcache.Cache
	From, Until uint64
	// failed: the shared read ended before Until. Set by the goroutine
	// that reads the storage (or the one that could not start it), read by
	// the watchers' goroutines.
	failed atomic.Bool
}

// Covers reports whether the history can replay the events after pos.
func (g *Shared) Covers(pos uint64) bool {
	return !g.failed.Load() && g.From <= pos && pos < g.Until
}

// Fail marks the history as unable to serve (nil-safe).
func (g *Shared) Fail() {
	if g != nil {
		g.failed.Store(true)
	}
}

// Failed reports whether the shared read ended before Until.
func (g *Shared) Failed() bool { return g.failed.Load() }
