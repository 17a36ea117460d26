package cacher

import (
	"context"
	"math/rand/v2"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/watchcache"
)

// watchSource is all a watcher reads history from: the cache's events,
// the shared catch-up of the last relist, and the storage's own history
// through a limited number of catch-up streams. The cacher's feed
// implements it (feed_source.go); the watcher state machine's tests fake
// it.
type watchSource interface {
	// eventsSince returns up to limit events after pos, and the RV up to
	// which the result is complete (see watchcache.Cache.EventsSince).
	eventsSince(pos uint64, limit int) ([]*watchcache.Event, uint64, error)
	// cacheRV is the cache's current RV.
	cacheRV() uint64
	// cacheHolds reports whether the cache can replay every event after rv.
	cacheHolds(rv uint64) bool
	// sharedGap is the shared history of the last relist, nil if none.
	sharedGap() *gapHistory
	// sharedBehind is a shared read of the storage's history that can
	// replay the events after pos, which fell out of the cache's history,
	// started if need be; nil if none can.
	sharedBehind(pos uint64) *gapHistory
	// storageWatch opens a watch of the storage's history.
	storageWatch(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error)
	// acquireSlot takes a catch-up stream slot, waiting at most timeout
	// (0: until ctx ends); releaseSlot gives it back if held.
	acquireSlot(ctx context.Context, timeout time.Duration) bool
	releaseSlot(held bool)
	// wantProgress asks the storage for a progress notification soon.
	wantProgress()
}

// watcherEnv is what every watcher of one cacher shares: where it reads
// history (src), the live dispatch it joins and leaves (hub), its clocks
// and the resource's configuration. It holds no reference to the Cacher.
type watcherEnv struct {
	src          watchSource
	hub          *hub
	clk          clocks
	metrics      Metrics
	versioner    storage.Versioner
	newFunc      func() runtime.Object
	keyFunc      func(runtime.Object) (string, error)
	catchUpBatch int
	bufferSize   int
}

// objectRV reads an object's RV, 0 when it has none.
func (e *watcherEnv) objectRV(obj runtime.Object) uint64 {
	rv, err := e.versioner.ObjectResourceVersion(obj)
	if err != nil {
		return 0
	}
	return rv
}

// newWatcher returns the watcher of a watch of key with opts, not started.
func (e *watcherEnv) newWatcher(key string, opts storage.ListOptions) *watcher {
	w := &watcher{env: e, key: key, recursive: opts.Recursive, pred: opts.Predicate,
		emptyPred: opts.Predicate.Empty(), bookmarks: opts.Predicate.AllowWatchBookmarks,
		progressNotify: opts.ProgressNotify, bookmarkSlot: rand.IntN(bookmarkSlots),
		input:  newEventQueue(e.bufferSize),
		lagged: make(chan struct{}, 1), result: make(chan watch.Event, 16), done: make(chan struct{}),
		stopped: make(chan struct{})}
	if w.recursive {
		w.prefix = recursivePrefix(key)
	}
	return w
}
