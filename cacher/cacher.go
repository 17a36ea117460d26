package cacher

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"

	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/watchcache"
)

// Cacher is a storage.Interface served from a watch cache. Create it with
// New, start it with Run.
//
// Owners: the feed (feed_*.go: list, watch, revisions, recovery,
// revalidation, consistency check) is the only writer of the cache; the
// hub (hub*.go) owns live dispatch and its lock, which the feed takes only
// through hub.commit to apply a change and dispatch it atomically; each
// watcher (watcher*.go) owns its delivery and sees the rest through its
// watcherEnv. runMu guards the run state and every wg.Add, so that no
// goroutine starts after Run began waiting for them. Lock order: runMu,
// then the hub's, then the cache's internal lock.
type Cacher struct {
	cfg    Config
	store  storage.Interface
	cache  *watchcache.Cache
	log    *slog.Logger
	prefix string // ResourcePrefix + "/": the key of the whole resource
	clk    clocks

	// hub is the live dispatch (see hub.go); env is what every watcher
	// shares (see watcher_env.go).
	hub *hub
	env *watcherEnv

	// wholeRevisions: the storage's watch marks revision ends (see
	// revisionBatch); learned from its first mark.
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

	// gap is the shared history of the last relist (see feed_gap.go), nil
	// before the first.
	gap atomic.Pointer[gapHistory]
	// behind is the newest shared read for watchers that fell out of the
	// cache's history (see feed_behind.go), nil when none is offered;
	// behindReads counts those still reading. Both guarded by behindMu.
	behindMu    sync.Mutex
	behind      *gapHistory
	behindReads int
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
	wg            sync.WaitGroup // watches (see startWatcher)
}

var _ storage.Interface = (*Cacher)(nil)

// New validates cfg, fills its defaults and returns a Cacher that serves
// nothing until Run has listed the resource.
func New(cfg Config) (*Cacher, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	cache, err := watchcache.New(cfg.cacheConfig())
	if err != nil {
		return nil, err
	}
	c := &Cacher{cfg: cfg, store: cfg.Storage, cache: cache, log: cfg.Logger,
		clk:            clocks{sched: cfg.Clock, wall: clock.RealClock{}},
		prefix:         cfg.ResourcePrefix + "/",
		hub:            newHub(cfg),
		catchUpSlots:   make(chan struct{}, cfg.MaxCatchUpStreams),
		progressWanted: make(chan struct{}, 1),
		relist:         make(chan error, 1),
	}
	c.env = &watcherEnv{src: c, hub: c.hub, clk: c.clk, metrics: cfg.Metrics, versioner: cfg.Versioner,
		newFunc: cfg.NewFunc, keyFunc: cfg.KeyFunc, catchUpBatch: cfg.CatchUpBatch, bufferSize: cfg.WatcherBufferSize}
	return c, nil
}

// ErrAlreadyStarted is returned by a second call to Run.
var ErrAlreadyStarted = errors.New("cacher: Run called twice")

// Run feeds the cache until ctx ends, then stops every watcher and returns
// once all goroutines of the cacher have exited. It returns nil after a
// clean shutdown.
func (c *Cacher) Run(ctx context.Context) error {
	c.runMu.Lock()
	if c.started {
		c.runMu.Unlock()
		return ErrAlreadyStarted
	}
	c.started, c.runCtx = true, ctx
	c.watchersCtx, c.abortWatchers = context.WithCancelCause(ctx)
	c.runMu.Unlock()

	defer c.watchTransformer()()
	bookmarks := c.hub.bookmarkLoop(c.clk.sched, c.cfg.BookmarkInterval, c.cache.RV) // its schedule starts now
	var own sync.WaitGroup
	own.Go(func() { c.reflect(ctx) })
	own.Go(func() { c.progressLoop(ctx) })
	own.Go(func() { bookmarks(ctx) })
	own.Go(func() { c.consistencyLoop(ctx) })
	own.Go(func() { c.hub.parkLoop(ctx, c.clk.sched, c.cfg.IdleWatcherParkDelay) })
	<-ctx.Done()
	own.Wait()
	c.runMu.Lock()
	c.stopped = true
	c.abortWatchers(nil)
	c.runMu.Unlock()
	c.wg.Wait()
	return nil
}

// startWatcher starts w's goroutine (w.run), with a context that ends
// with Run's, with reqCtx's, or when w.abort is called. The watch counts
// in c.wg until w.finish calls w.release, whether or not it has a
// goroutine meanwhile (see watcher_park.go). It fails when Run has not started or
// has stopped.
func (c *Cacher) startWatcher(reqCtx context.Context, w *watcher) error {
	c.runMu.Lock()
	defer c.runMu.Unlock()
	if !c.started || c.stopped || c.runCtx.Err() != nil {
		return &storage.Error{Code: storage.CodeNotReady, RetryAfterSeconds: 1, Msg: "cacher is not running"}
	}
	ctx, cancel := context.WithCancelCause(c.watchersCtx)
	w.ctx, w.abort = ctx, cancel
	stopReq := context.AfterFunc(reqCtx, func() { cancel(nil) })
	stopWake := context.AfterFunc(ctx, w.wakeAsync)
	w.release = func() {
		stopWake()
		stopReq()
		cancel(nil)
		c.wg.Done()
	}
	c.wg.Add(1)
	c.hub.opened(w)
	go w.run(ctx)
	return nil
}

// WaitReady blocks until the first list has been loaded or ctx ends. When
// ctx ends first and the storage is not ready either (etcd unreachable),
// the error is the storage's, naming what it could not reach.
func (c *Cacher) WaitReady(ctx context.Context) error {
	return c.explainNotReady(c.cache.WaitUntilFresh(ctx, 0))
}

// ReadinessCheck implements storage.Interface: the cache has loaded its
// first list, so reads it can answer (RV "0", NotOlderThan, watches) are
// served, from memory, even while the storage is unreachable. Before that
// it is the storage's readiness error when the storage is not ready (see
// WaitReady), else ErrNotReady. The storage's own ReadinessCheck tells
// whether etcd answers.
func (c *Cacher) ReadinessCheck() error {
	if _, ready := c.cache.RV(); !ready {
		return c.explainNotReady(&storage.Error{Code: storage.CodeNotReady, RetryAfterSeconds: 1, Msg: "watch cache is initializing"})
	}
	return nil
}

// Versioner implements storage.Interface.
func (c *Cacher) Versioner() storage.Versioner { return c.cfg.Versioner }

// Create implements storage.Interface; it writes to the storage (an
// object the cache could not key is refused, see writecheck.go).
func (c *Cacher) Create(ctx context.Context, key string, obj, out runtime.Object, ttl uint64) error {
	if err := c.checkWritable(key, obj); err != nil {
		return err
	}
	if err := c.store.Create(ctx, key, obj, out, ttl); err != nil {
		return err
	}
	c.noteWrite(out)
	return nil
}

// Delete implements storage.Interface; it writes to the storage, starting
// from the cache's copy of the object (see suggestion).
func (c *Cacher) Delete(ctx context.Context, key string, out runtime.Object, preconditions *storage.Preconditions,
	validateDeletion storage.ValidateObjectFunc, cachedExistingObject runtime.Object, opts storage.DeleteOptions) error {
	cachedExistingObject, opts.SuggestionDecoded = c.suggestion(key, cachedExistingObject, opts.SuggestionDecoded)
	if err := c.store.Delete(ctx, key, out, preconditions, validateDeletion, cachedExistingObject, opts); err != nil {
		return err
	}
	c.noteWrite(out)
	return nil
}

// GuaranteedUpdate implements storage.Interface; it writes to the storage
// (an object the cache could not key is refused, see
// writecheck.go), starting from the cache's copy of the object (see suggestion) unless the
// caller set preconditions. The storage tells tryUpdate a suggestion's TTL
// as 0 and its compare-and-swap fails when the key has a lease, so
// tryUpdate runs again on the stored state with the key's real TTL.
//
// With preconditions the update reads etcd first, as before: a cached copy
// one write behind can pass a resourceVersion precondition that the stored
// object fails, and tryUpdate must not run when the stored object fails
// them (storagetest's UpdatePreconditionResourceVersionFails).
func (c *Cacher) GuaranteedUpdate(ctx context.Context, key string, destination runtime.Object, ignoreNotFound bool,
	preconditions *storage.Preconditions, tryUpdate storage.UpdateFunc, cachedExistingObject runtime.Object, opts storage.UpdateOptions) error {
	if preconditions == nil || (preconditions.UID == nil && preconditions.ResourceVersion == nil) {
		cachedExistingObject, opts.SuggestionDecoded = c.suggestion(key, cachedExistingObject, opts.SuggestionDecoded)
	}
	tryUpdate = c.checkedUpdate(key, tryUpdate)
	if err := c.store.GuaranteedUpdate(ctx, key, destination, ignoreNotFound, preconditions, tryUpdate, cachedExistingObject, opts); err != nil {
		return err
	}
	c.noteWrite(destination)
	return nil
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
// the values at their revisions (its compaction shares memory without
// changing values), so decoded is true (the options' SuggestionDecoded):
// the storage may then copy the object instead of decoding that value again.
// The caller's suggestion keeps the caller's givenDecoded.
func (c *Cacher) suggestion(key string, given runtime.Object, givenDecoded bool) (obj runtime.Object, decoded bool) {
	if _, ready := c.cache.RV(); !ready || !c.trusted() {
		return given, givenDecoded
	}
	el, _, ok, err := c.cache.Get(key)
	if err != nil || !ok {
		return given, givenDecoded
	}
	cached, err := el.Object()
	if err != nil {
		return given, givenDecoded
	}
	return cached.DeepCopyObject(), c.cfg.Codec == nil
}

// Stats implements storage.Interface: the storage's count.
func (c *Cacher) Stats(ctx context.Context) (storage.Stats, error) { return c.store.Stats(ctx) }

// RequestWatchProgress implements storage.Interface.
func (c *Cacher) RequestWatchProgress(ctx context.Context) error {
	return c.store.RequestWatchProgress(ctx)
}

// GetCurrentResourceVersion implements storage.Interface: a storage quorum
// read started after the call, shared with the consistent reads and
// watches that ask at the same time (see sharedReads).
func (c *Cacher) GetCurrentResourceVersion(ctx context.Context) (uint64, error) {
	return c.currentRV(ctx)
}

// CompactRevision implements storage.Interface: the storage's compacted
// revision (etcd's, whoever compacted it). Exact lists, continue tokens and
// watches below it answer 410 Gone even when the cache still holds that
// state.
func (c *Cacher) CompactRevision() int64 {
	rev := c.store.CompactRevision()
	if rev > 0 {
		c.cache.Compact(uint64(rev))
	}
	return max(rev, int64(c.cache.Compacted()))
}

// learnCompaction brings the cache's record of the storage's compaction up
// to date before a read or watch at rv is answered from memory. With fresh
// set, or for an rv older than the cache's newest state, it asks the storage
// now (when the storage can), so that 410 means exactly "etcd compacted rv",
// on every replica alike; otherwise knowledge at most about a second old is
// enough, since etcd compacts only revisions it has already passed.
func (c *Cacher) learnCompaction(ctx context.Context, rv uint64, fresh bool) error {
	if rv < c.cache.Compacted() {
		return nil
	}
	cur, _ := c.cache.RV()
	r, ok := c.store.(storage.CompactRevisionRefresher)
	if !ok || (!fresh && rv >= cur) {
		c.CompactRevision()
		return nil
	}
	rev, err := c.compactions.do(ctx, "compacted revision", r.RefreshCompactRevision)
	if err != nil {
		return err
	}
	if rev > 0 {
		c.cache.Compact(uint64(rev))
	}
	return nil
}
