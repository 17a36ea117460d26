package cacher

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/cacher/internal/history"
	"github.com/listwatch/listwatch/cacher/internal/hub"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/watchcache"
)

// feed is the only writer of the cache: its reflector goroutine lists the
// resource and applies the storage's watch, revision by revision, through
// Hub.Commit (feed_reflector.go, feed_revision.go, feed_listpages.go); it
// recovers from failing watches (feed_recovery.go), revalidates after
// transformer changes (feed_revalidate.go), checks its consistency with the
// storage (feed_consistency.go), keeps the corrupt and uncacheable keys
// (feed_corrupt.go, feed_uncacheable.go), and reads the storage's history
// for watchers the cache cannot serve (feed_history.go). It is
// the watchers' watcher.Source (feed_source.go), and answers route.go's
// questions (ready, trusted, corrupt keys, fresh).
//
// Goroutines and what they own: the reflector goroutine (reflect) is the
// only writer of the cache and of wholeRevisions, trustedGen and
// corruptKeys (the latter inside Hub.Commit); any goroutine bumps
// distrustGen (the storage's transformer callback, the consistency loop,
// the reflector's recovery) and reads the atomics. writtenRV is raised by
// the writers (noteWrite). shared.mu guards the shared reads of the
// storage's history and their reference counts (see sharedHistories); each
// read's own goroutine (startRead) is the only writer of its cache. runMu
// guards the run state and every wg.Add, so that no goroutine starts after
// Run began waiting for them.
// Lock order: runMu, then the hub's lock, then the cache's internal lock;
// shared.mu is taken last (under it, only the shared reads' own caches' locks).
type feed struct {
	cfg    Config
	store  storage.Interface
	cache  *watchcache.Cache
	hub    *hub.Hub
	log    *slog.Logger
	prefix string // ResourcePrefix + "/": the key of the whole resource
	clk    clocks

	// wholeRevisions: the storage's watch marks revision ends (see
	// gathering); learned from its first mark.
	wholeRevisions atomic.Bool
	// writtenRV is the newest RV of a write made through the cacher
	// (noteWrite); reads at RV "0" wait for it (waitOwnWrites).
	writtenRV atomic.Uint64
	// relist asks the reflector to list again, with the reason (the
	// consistency check found the cache diverged from the storage, the
	// storage's transformer changed); see askRelist.
	relist chan error
	// distrustGen counts the events after which the cache's content cannot
	// be trusted until a new list replaces it (the storage's transformer
	// changed, the consistency check found a divergence); trustedGen is
	// its value when the list that filled the cache started (see
	// feed_revalidate.go).
	distrustGen, trustedGen atomic.Uint64
	// corruptKeys are the keys whose values the storage could not decode
	// when the cache was filled (see feed_corrupt.go); nil: none.
	corruptKeys atomic.Pointer[[]string]
	// revisions shares the storage's current revision between concurrent
	// consistent reads, compactions its compacted revision between the
	// reads and watches that must know it now (sharedreads.go).
	revisions   sharedReads[uint64]
	compactions sharedReads[int64]
	// dropEvent, set only by tests (export_test.go), makes applyRevision
	// skip an event: the cache then diverges from the storage.
	dropEvent atomic.Pointer[func(watch.EventType, runtime.Object) bool]

	// shared are the shared reads of the storage's history (see
	// feed_history.go).
	shared sharedHistories
	// catchUpSlots is a semaphore of MaxCatchUpStreams storage watches.
	catchUpSlots chan struct{}
	// progressWanted asks the progress loop for a progress request now.
	progressWanted chan struct{}

	runMu  sync.Mutex
	runCtx context.Context // set by Run; ends every watcher
	// watchersCtx is the parent of every watcher's context (a child of
	// runCtx); abortWatchers ends them all with a cause (see reinitialize).
	watchersCtx   context.Context
	abortWatchers context.CancelCauseFunc
	started       bool
	stopped       bool
	wg            sync.WaitGroup // watches and shared reads (see Cacher.startWatcher)
}

// sharedHistories are the shared reads of the storage's history (see
// feed_history.go), guarded by mu: watchers' goroutines take and give back
// references (Read, Release).
type sharedHistories struct {
	mu sync.Mutex
	// reads are the reads with readers; idle the one kept without.
	reads []*history.Shared
	idle  *history.Shared
	// freed is closed (and replaced) when a read loses its last reader.
	freed chan struct{}
}

func newFeed(cfg Config, cache *watchcache.Cache, h *hub.Hub, clk clocks) *feed {
	return &feed{cfg: cfg, store: cfg.Storage, cache: cache, hub: h, log: cfg.Logger, clk: clk,
		prefix:         cfg.ResourcePrefix + "/",
		catchUpSlots:   make(chan struct{}, cfg.MaxCatchUpStreams),
		progressWanted: make(chan struct{}, 1),
		relist:         make(chan error, 1),
		shared:         sharedHistories{freed: make(chan struct{})},
	}
}

// learnCompacted is the storage's compacted revision (etcd's, whoever
// compacted it), recorded in the cache; see Cacher.CompactRevision.
func (f *feed) learnCompacted() int64 {
	rev := f.store.CompactRevision()
	if rev > 0 {
		f.cache.Compact(uint64(rev))
	}
	return max(rev, int64(f.cache.Compacted()))
}

// suggestion returns the object an update or delete of key starts from:
// a deep copy of the cache's copy when it holds the key (and its content
// can be trusted), else the caller's. The copy is the storage's to mutate
// (tryUpdate may change its input); cached objects are shared. The storage
// checks it with its compare-and-swap and reads afresh only when it is
// stale, so a write whose object the cache holds up to date costs one etcd
// round trip instead of two.
//
// A cache that keeps decoded objects holds the storage's own decodings of
// the values at their revisions (its packing shares memory without
// changing values), so decoded is true (the options' SuggestionDecoded):
// the storage may then copy the object instead of decoding that value again.
// The caller's suggestion keeps the caller's givenDecoded.
func (f *feed) suggestion(key string, given runtime.Object, givenDecoded bool) (obj runtime.Object, decoded bool) {
	if _, ready := f.cache.RV(); !ready || !f.trusted() {
		return given, givenDecoded
	}
	el, _, ok, err := f.cache.Get(key)
	if err != nil || !ok {
		return given, givenDecoded
	}
	cached, err := el.Object()
	if err != nil {
		return given, givenDecoded
	}
	return cached.DeepCopyObject(), f.cfg.Codec == nil
}

// learnCompaction brings the cache's record of the storage's compaction up
// to date before a read or watch at rv is answered from memory. With fresh
// set, or for an rv older than the cache's newest state, it asks the storage
// now (when the storage can), so that 410 means exactly "etcd compacted rv",
// on every replica alike; otherwise knowledge at most about a second old is
// enough, since etcd compacts only revisions it has already passed.
func (f *feed) learnCompaction(ctx context.Context, rv uint64, fresh bool) error {
	if rv < f.cache.Compacted() {
		return nil
	}
	cur, _ := f.cache.RV()
	r, ok := f.store.(storage.CompactRevisionRefresher)
	if !ok || (!fresh && rv >= cur) {
		f.learnCompacted()
		return nil
	}
	rev, err := f.compactions.do(ctx, "compacted revision", r.RefreshCompactRevision)
	if err != nil {
		return err
	}
	if rev > 0 {
		f.cache.Compact(uint64(rev))
	}
	return nil
}
