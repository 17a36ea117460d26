package watcher

import (
	"context"
	"math/rand/v2"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"

	"github.com/listwatch/listwatch/cacher/internal/history"
	"github.com/listwatch/listwatch/cacher/internal/hub"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/watchcache"
)

// Source is all a watcher reads history from: the cache's events, the
// shared reads of the storage's history, and the storage's own history
// through a limited number of catch-up streams. The cacher's feed
// implements it; the state machine's tests fake it.
type Source interface {
	// EventsSince returns up to limit events after pos, and the RV up to
	// which the result is complete (see watchcache.Cache.EventsSince).
	EventsSince(pos uint64, limit int) ([]*watchcache.Event, uint64, error)
	// CacheRV is the cache's current RV.
	CacheRV() uint64
	// CacheHolds reports whether the cache can replay every event after rv.
	CacheHolds(rv uint64) bool
	// Shared is a shared read of the storage's history that can replay
	// the events after pos, other than skip (one that could not serve the
	// watcher): the last relist's, or one for watchers that fell out of the
	// cache's history, started if need be; nil if none can.
	Shared(pos uint64, skip *history.Shared) *history.Shared
	// StorageWatch opens a watch of the storage's history.
	StorageWatch(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error)
	// AcquireSlot takes a catch-up stream slot, waiting at most timeout
	// (0: until ctx ends); ReleaseSlot gives it back if held.
	AcquireSlot(ctx context.Context, timeout time.Duration) bool
	ReleaseSlot(held bool)
	// WantProgress asks the storage for a progress notification soon.
	WantProgress()
}

// Metrics is what watchers measure.
type Metrics interface {
	// WatchersChanged counts watches started (+1) and ended (-1).
	WatchersChanged(delta int)
	// WatcherTerminated counts watches ended by the cacher, by reason.
	WatcherTerminated(reason string)
}

// Env is what every watcher of one cacher shares: where it reads history
// (Source), the live dispatch it joins and leaves (Hub), the wall clock
// and the resource's configuration. It holds no reference to the cacher.
type Env struct {
	Source Source
	Hub    *hub.Hub
	// Wall times liveness polls, retries and what is aimed at a request
	// context's deadline.
	Wall      clock.WithTickerAndDelayedExecution
	Metrics   Metrics
	Versioner storage.Versioner
	NewFunc   func() runtime.Object
	KeyFunc   func(runtime.Object) (string, error)
	// CatchUpBatch is how many events a catching-up watcher copies from
	// history at a time; BufferSize how many live events concerning it
	// may wait for it in the hub's log.
	CatchUpBatch, BufferSize int
}

// Plan is where a new watch starts.
type Plan struct {
	Pos             uint64        // deliver events after Pos
	Initial         *InitialState // initial events from the cache, if any
	StorageInitial  bool          // initial events from the storage (the cache lagged)
	StorageAnnotate bool          // ... ending with the initial-events-end bookmark
	StorageFirst    bool          // start from the storage: the RV is compacted there (it answers 410)
	SlotHeld        bool          // a catch-up slot was taken for this watch
}

// InitialState is the state a watch starts with.
type InitialState struct {
	Items    []*watchcache.Element
	RV       uint64
	Annotate bool // end with the initial-events-end bookmark
}

// objectRV reads an object's RV, 0 when it has none.
func (e *Env) objectRV(obj runtime.Object) uint64 {
	rv, err := e.Versioner.ObjectResourceVersion(obj)
	if err != nil {
		return 0
	}
	return rv
}

// New returns the watcher of a watch of key with opts, not started.
func (e *Env) New(key string, opts storage.ListOptions) *Watcher {
	spec := hub.Spec{Key: key, Recursive: opts.Recursive, Pred: opts.Predicate, EmptyPred: opts.Predicate.Empty(),
		Bookmarks: opts.Predicate.AllowWatchBookmarks, ProgressNotify: opts.ProgressNotify,
		BookmarkSlot: rand.IntN(hub.BookmarkSlots)}
	if spec.Recursive {
		spec.Prefix = hub.RecursivePrefix(key)
	}
	w := &Watcher{env: e, result: make(chan watch.Event, 16), done: make(chan struct{}), stopped: make(chan struct{})}
	w.e = hub.NewEntry(spec, w, e.BufferSize)
	return w
}

// Scope is the key prefix the watch covers, and whether it is recursive.
func (w *Watcher) Scope() (string, bool) {
	if w.e.Recursive {
		return w.e.Prefix, true
	}
	return w.e.Key, false
}

// ListOptions selects the watch's objects in the cache; index is the
// cache index its predicate can use, if any.
func (w *Watcher) ListOptions(index *watchcache.IndexValue) watchcache.ListOptions {
	q := watchcache.ListOptions{Key: w.e.Key, Recursive: w.e.Recursive, Index: index}
	if w.e.Recursive {
		q.Key = w.e.Prefix
	}
	if !w.e.EmptyPred {
		q.Filter = w.e.Matches
	}
	return q
}

// Pred is the watch's predicate.
func (w *Watcher) Pred() storage.SelectionPredicate { return w.e.Pred }
