// Package history holds what a watcher of the cacher replays: a History,
// the events after a position. It has two implementations: the cache's
// own ring (the feed's watchcache) and Shared, a read of the storage's
// history shared by the watchers that need the same part of it.
package history

import (
	"context"
	"strings"
	"sync"

	"github.com/listwatch/listwatch/watchcache"
)

// History is the events after a position, as a stream: a watcher asks for
// the next ones again and again.
type History interface {
	// EventsSince returns up to limit events after pos (extended to the
	// end of the last revision it includes) and the RV up to which the
	// history is complete; a *watchcache.TooOldError when the history no
	// longer holds pos, storage.ErrNotReady while it holds nothing yet.
	EventsSince(pos uint64, limit int) ([]*watchcache.Event, uint64, error)
}

var _ History = (*watchcache.Cache)(nil)

// Scope is the keys a read covers: every key under Key when Recursive,
// else Key alone.
type Scope struct {
	Key       string
	Recursive bool
}

// Covers reports whether every key of o is in s.
func (s Scope) Covers(o Scope) bool {
	if s.Recursive {
		return strings.HasPrefix(o.Key, s.Key)
	}
	return !o.Recursive && o.Key == s.Key
}

// Shared is the storage's history of a scope from a revision (From) on,
// read through one storage stream and applied, a whole revision at a
// time (see Revision), to a cache of its own that first holds the scope's
// state at From. The watchers that need that part of the history replay
// it together, each filtered by its own predicate as live events are. The
// cacher's feed starts it, counts its readers and ends it; one goroutine
// fills it.
type Shared struct {
	// Cache holds the state at From and the history after it, as far as
	// it has been read (its RV). Written only by the goroutine that reads
	// the storage, a revision at a time (Applying).
	Cache *watchcache.Cache
	From  uint64
	Scope Scope
	// Corrupt is the storage's error naming the objects of Scope at From
	// it could not decode, which Cache leaves out (nil: none); set before
	// Cache holds the state.
	Corrupt error

	// Refs counts the watchers replaying it; guarded by the feed's lock.
	Refs int
	// Stop ends the storage stream (set by the feed before the read
	// starts).
	Stop func()

	apply sync.RWMutex // held by the reading goroutine while it applies a revision
	// ended is done when the storage stream has ended; err is set before.
	ended context.Context
	end   context.CancelFunc
	err   error
}

// NewShared returns the read of scope from revision from, to be filled in
// cache.
func NewShared(cache *watchcache.Cache, from uint64, scope Scope) *Shared {
	ended, end := context.WithCancel(context.Background())
	return &Shared{Cache: cache, From: from, Scope: scope, Stop: func() {}, ended: ended, end: end}
}

// EventsSince implements History.
func (g *Shared) EventsSince(pos uint64, limit int) ([]*watchcache.Event, uint64, error) {
	return g.Cache.EventsSince(pos, limit)
}

// Applying takes the lock under which a revision is applied; the reading
// goroutine holds it for each whole revision.
func (g *Shared) Applying() (unlock func()) {
	g.apply.Lock()
	return g.apply.Unlock
}

// Whole runs fn while no revision is being applied: fn sees whole
// revisions only.
func (g *Shared) Whole(fn func()) {
	g.apply.RLock()
	defer g.apply.RUnlock()
	fn()
}

// End records that the storage stream ended, with the storage's answer
// (err) when it failed; nothing more will be read. Called once, by the
// reading goroutine.
func (g *Shared) End(err error) {
	g.err = err
	g.end()
}

// WaitUntilFresh waits until the read holds every revision up to rv; an
// error when ctx ends or the stream ends first.
func (g *Shared) WaitUntilFresh(ctx context.Context, rv uint64) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(g.ended, cancel)()
	return g.Cache.WaitUntilFresh(ctx, rv)
}

// Err is the storage's answer that ended the read (nil when it ended
// because it was no longer needed, or it has not ended).
func (g *Shared) Err() error {
	if g.Reading() {
		return nil
	}
	return g.err
}

// Reading reports whether the storage stream is still running.
func (g *Shared) Reading() bool {
	select {
	case <-g.ended.Done():
		return false
	default:
		return true
	}
}

// Holds reports whether the read can replay the events after pos for a
// watcher of scope: it covers the scope, started at or before pos, still
// holds pos, and either reads on or has read past pos.
func (g *Shared) Holds(pos uint64, scope Scope) bool {
	if !g.Scope.Covers(scope) || pos < g.From || g.Err() != nil {
		return false
	}
	rv, ready := g.Cache.RV()
	if !ready {
		return g.Reading()
	}
	return pos >= g.Cache.Oldest() && (g.Reading() || pos < rv)
}

// Want is what a watcher asks of a shared read: the events after Pos in
// Scope. Behind: the watcher fell out of live dispatch (a read shared by
// every watcher behind serves it). Exact: a read started at Pos for Scope
// exactly, whose failure is the storage's answer to the watch.
type Want struct {
	Pos           uint64
	Scope         Scope
	Behind, Exact bool
}
