package cacher

import (
	"context"
	"errors"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"

	"github.com/listwatch/listwatch/cacher/internal/hub"
	"github.com/listwatch/listwatch/cacher/internal/watcher"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/watchcache"
)

// Cacher is a storage.Interface served from a watch cache. Create it with
// New, start it with Run.
//
// It is the wiring of three parts, each the owner of its state: the feed
// (feed.go: list, watch, revisions, recovery, revalidation, consistency
// check, the shared catch-up reads) is the only writer of the cache; the
// hub (package hub) owns live dispatch and is the only holder of its lock,
// which the feed takes only through Hub.Commit to apply a change and
// dispatch it atomically; each watcher (package watcher) owns its delivery
// and sees the rest through its watcher.Env. Cacher itself serves
// storage.Interface: route.go decides who answers each read, reads.go and
// watch.go carry it out, writes go to the storage.
type Cacher struct {
	cfg   Config
	store storage.Interface
	cache *watchcache.Cache // written by the feed only
	clk   clocks
	f     *feed
	hub   *hub.Hub
	env   *watcher.Env
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
	clk := clocks{sched: cfg.Clock, wall: clock.RealClock{}}
	h := hub.New(hub.Config{IndexLabels: cfg.IndexLabels, IndexFields: cfg.IndexFields, Wall: clk.wall, Metrics: cfg.Metrics,
		LogSize: cfg.WatcherBufferSize, Coalesce: max(cfg.WakeCoalesce, 0), CacheRV: cache.RV})
	f := newFeed(cfg, cache, h, clk)
	env := &watcher.Env{Source: f, Hub: h, Wall: clk.wall, Metrics: cfg.Metrics, Versioner: cfg.Versioner,
		NewFunc: cfg.NewFunc, KeyFunc: cfg.KeyFunc, CatchUpBatch: cfg.CatchUpBatch, BufferSize: cfg.WatcherBufferSize}
	return &Cacher{cfg: cfg, store: cfg.Storage, cache: cache, clk: clk, f: f, hub: h, env: env}, nil
}

// ErrAlreadyStarted is returned by a second call to Run.
var ErrAlreadyStarted = errors.New("cacher: Run called twice")

// Run feeds the cache until ctx ends, then stops every watcher and returns
// once all goroutines of the cacher have exited. It returns nil after a
// clean shutdown.
func (c *Cacher) Run(ctx context.Context) error {
	f := c.f
	f.runMu.Lock()
	if f.started {
		f.runMu.Unlock()
		return ErrAlreadyStarted
	}
	f.started, f.runCtx = true, ctx
	f.watchersCtx, f.abortWatchers = context.WithCancelCause(ctx)
	f.runMu.Unlock()

	defer f.watchTransformer()()
	bookmarks := c.hub.BookmarkLoop(c.clk.sched, c.cfg.BookmarkInterval) // its schedule starts now
	var own sync.WaitGroup
	own.Go(func() { f.reflect(ctx) })
	own.Go(func() { f.progressLoop(ctx) })
	own.Go(func() { bookmarks(ctx) })
	own.Go(func() { f.consistencyLoop(ctx) })
	<-ctx.Done()
	own.Wait()
	f.runMu.Lock()
	f.stopped = true
	f.abortWatchers(nil)
	f.runMu.Unlock()
	f.wg.Wait()
	return nil
}

// startWatcher starts w's goroutine, with a context that ends with Run's,
// with reqCtx's, or when w is aborted. The watch counts in the feed's wg until it
// ends and releases it, whether or not it has a goroutine meanwhile (a
// watcher in live dispatch whose client keeps up has none). It fails when
// Run has not started or has stopped.
//
// The watch's context is a child of the feed's watchers context, which
// ends it (with its cause) at once. Each way it ends wakes the watcher
// (starting a goroutine if it has none), on a goroutine of its own (the
// hub aborts watches holding its lock, which waking takes): end, for the request's context and
// aborts, and a callback on the watchers context, shared by all the
// watches. A callback on each watch's own context cost a children map and
// a callback context more per watch (about 260 bytes).
func (c *Cacher) startWatcher(reqCtx context.Context, w *watcher.Watcher) error {
	f := c.f
	f.runMu.Lock()
	defer f.runMu.Unlock()
	if !f.started || f.stopped || f.runCtx.Err() != nil {
		return &storage.Error{Code: storage.CodeNotReady, RetryAfterSeconds: 1, Msg: "cacher is not running"}
	}
	ctx, cancel := context.WithCancelCause(f.watchersCtx)
	end := func(cause error) {
		if ctx.Err() != nil {
			return // ended already, and woken
		}
		cancel(cause)
		go w.Wake()
	}
	stopReq := context.AfterFunc(reqCtx, func() { end(nil) })
	stopWake := context.AfterFunc(f.watchersCtx, w.Wake)
	f.wg.Add(1)
	w.Start(ctx, end, func() {
		stopWake()
		stopReq()
		cancel(nil)
		f.wg.Done()
	})
	return nil
}

// WaitReady blocks until the first list has been loaded or ctx ends. When
// ctx ends first and the storage is not ready either (etcd unreachable),
// the error is the storage's, naming what it could not reach.
func (c *Cacher) WaitReady(ctx context.Context) error {
	return c.f.explainNotReady(c.cache.WaitUntilFresh(ctx, 0))
}

// ReadinessCheck implements storage.Interface: the cache has loaded its
// first list, so reads it can answer (RV "0", NotOlderThan, watches) are
// served, from memory, even while the storage is unreachable. Before that
// it is the storage's readiness error when the storage is not ready (see
// WaitReady), else ErrNotReady. The storage's own ReadinessCheck tells
// whether etcd answers.
func (c *Cacher) ReadinessCheck() error {
	if _, ready := c.cache.RV(); !ready {
		return c.f.explainNotReady(&storage.Error{Code: storage.CodeNotReady, RetryAfterSeconds: 1, Msg: "watch cache is initializing"})
	}
	return nil
}

// Versioner implements storage.Interface.
func (c *Cacher) Versioner() storage.Versioner { return c.cfg.Versioner }

// Create implements storage.Interface; it writes to the storage (an
// object the cache could not key is refused, see writecheck.go).
func (c *Cacher) Create(ctx context.Context, key string, obj, out runtime.Object, ttl uint64) error {
	if err := c.f.checkWritable(key, obj); err != nil {
		return err
	}
	if err := c.store.Create(ctx, key, obj, out, ttl); err != nil {
		return err
	}
	c.f.noteWrite(out)
	return nil
}

// Delete implements storage.Interface; it writes to the storage, starting
// from the cache's copy of the object (see suggestion).
func (c *Cacher) Delete(ctx context.Context, key string, out runtime.Object, preconditions *storage.Preconditions,
	validateDeletion storage.ValidateObjectFunc, cachedExistingObject runtime.Object, opts storage.DeleteOptions) error {
	cachedExistingObject, opts.SuggestionDecoded = c.f.suggestion(key, cachedExistingObject, opts.SuggestionDecoded)
	if err := c.store.Delete(ctx, key, out, preconditions, validateDeletion, cachedExistingObject, opts); err != nil {
		return err
	}
	c.f.noteWrite(out)
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
		cachedExistingObject, opts.SuggestionDecoded = c.f.suggestion(key, cachedExistingObject, opts.SuggestionDecoded)
	}
	tryUpdate = c.f.checkedUpdate(key, tryUpdate)
	if err := c.store.GuaranteedUpdate(ctx, key, destination, ignoreNotFound, preconditions, tryUpdate, cachedExistingObject, opts); err != nil {
		return err
	}
	c.f.noteWrite(destination)
	return nil
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
	return c.f.currentRV(ctx)
}

// CompactRevision implements storage.Interface: the storage's compacted
// revision (etcd's, whoever compacted it). Exact lists, continue tokens and
// watches below it answer 410 Gone even when the cache still holds that
// state.
func (c *Cacher) CompactRevision() int64 { return c.f.learnCompacted() }
