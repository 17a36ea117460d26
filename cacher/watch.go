package cacher

import (
	"context"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/cacher/internal/watcher"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/watchcache"
)

// Watch implements storage.Interface. Start points follow the etcd3 store
// (storage.ParseWatchRequest decides them): SendInitialEvents=false with
// RV "" or "0" starts after the storage's current revision; RV "" with
// SendInitialEvents unset first sends the cache's state once it is
// consistent, RV "0" its state as it is, as ADDED; SendInitialEvents=true
// sends a consistent state not older than the RV and then, with bookmarks
// allowed, the annotated bookmark; RV N delivers the events after N, from
// the cache or, when older than its history, from etcd's. While the cache
// is not ready (being initialised or re-initialised) or not trusted (being
// relisted after a transformer change, a divergence or a failing storage
// watch) a watch waits at most ReadyWaitTimeout; then a watch from RV N
// starts from etcd's history and moves to the cache once it holds N, other
// watches are served by the storage while the cache is untrusted and
// answer not ready while it is not ready.
func (c *Cacher) Watch(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	return c.watch(ctx, key, opts, false)
}

// WatchEncoded implements storage.EncodedWatcher: Watch whose events from
// the cache carry their object as a *storage.EncodedObject (see
// carry).
func (c *Cacher) WatchEncoded(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	return c.watch(ctx, key, opts, true)
}

// watch is Watch, with encoded as WatchEncoded asks.
func (c *Cacher) watch(ctx context.Context, key string, opts storage.ListOptions, encoded bool) (watch.Interface, error) {
	if err := storage.ValidateKey(key, c.cfg.ResourcePrefix, opts.Recursive); err != nil {
		return nil, err
	}
	if err := c.f.checkReachable(ctx, opts.ResourceVersion); err != nil {
		return nil, err
	}
	req, err := storage.ParseWatchRequest(opts)
	if err != nil {
		return nil, err
	}
	r, err := c.f.routeWatch(ctx, req)
	if err != nil {
		return nil, err
	}
	w := c.env.New(key, opts)
	w.Encoded = encoded
	if deadline, ok := ctx.Deadline(); ok && opts.Predicate.AllowWatchBookmarks {
		w.SetDeadlineBookmark(storage.DeadlineBookmarkTime(c.clk.wall.Now(), deadline))
	}
	switch r {
	case watchHistoryFirst:
		w.Plan = watcher.Plan{Pos: req.Rev, StorageFirst: true}
	case watchStorageState:
		if w.Plan, err = c.planFromStorage(ctx, req); err != nil {
			return nil, err
		}
	default:
		if w.Plan, err = c.planWatch(ctx, w, req); err != nil {
			return nil, err
		}
	}
	if w.Plan.StorageFirst || (w.Plan.Initial == nil && !c.f.CacheHolds(w.Plan.Pos)) {
		if !c.f.AcquireSlot(ctx, c.cfg.CatchUpWaitTimeout) {
			return nil, &storage.Error{Code: storage.CodeTooManyRequests, RetryAfterSeconds: 1,
				Msg: "too many watches catching up from etcd history"}
		}
		w.Plan.SlotHeld = true
	}
	err = c.startWatcher(ctx, w)
	if err != nil {
		c.f.ReleaseSlot(w.Plan.SlotHeld)
		return nil, err
	}
	c.cfg.Metrics.WatchersChanged(1)
	return w, nil
}

// planWatch resolves the start req asks for (the etcd3 store's rules,
// see storage.ParseWatchRequest) from the cache.
func (c *Cacher) planWatch(ctx context.Context, w *watcher.Watcher, req storage.WatchRequest) (watcher.Plan, error) {
	switch req.Start {
	case storage.WatchWithState:
		return c.planInitial(ctx, w, req.Rev, req.Consistent, req.Annotate)
	case storage.WatchFromNow:
		cur, err := c.f.currentRV(ctx)
		if err != nil {
			return watcher.Plan{}, err
		}
		return watcher.Plan{Pos: cur}, nil
	}
	rv := req.Rev
	// A client RV that etcd has compacted gets etcd's answer (410), even
	// if the cache still holds the events after it.
	if err := c.f.learnCompaction(ctx, rv, false); err != nil {
		return watcher.Plan{}, err
	}
	// etcd compacted rv when rv < its compact revision; the storage answers.
	if compacted := c.cache.Compacted(); rv < compacted {
		return watcher.Plan{Pos: rv, StorageFirst: true}, nil
	}
	return watcher.Plan{Pos: rv}, nil
}

// planFromStorage resolves, while the cache cannot be trusted, the start of
// a watch that does not ask only for the events after an explicit RV
// (storage.WatchAfterRev): the storage sends the initial state (not older
// than req.Rev), or the watch starts after the storage's current revision.
func (c *Cacher) planFromStorage(ctx context.Context, req storage.WatchRequest) (watcher.Plan, error) {
	if req.Start == storage.WatchFromNow {
		cur, err := c.f.currentRV(ctx)
		if err != nil {
			return watcher.Plan{}, err
		}
		return watcher.Plan{Pos: cur, StorageFirst: true}, nil
	}
	return watcher.Plan{Pos: req.Rev, StorageInitial: true, StorageAnnotate: req.Annotate}, nil
}

// planInitial takes the state a watch with initial events starts from: the
// cache's current state, once it is at least minRV and, when consistent,
// at least the storage's current revision (at RV "0", once it holds this
// cacher's own writes, see waitOwnWrites). When the cache does not get
// there in time, the storage sends the initial state instead.
func (c *Cacher) planInitial(ctx context.Context, w *watcher.Watcher, minRV uint64, consistent, annotate bool) (watcher.Plan, error) {
	target := minRV
	if consistent {
		cur, err := c.f.currentRV(ctx)
		if err != nil {
			return watcher.Plan{}, err
		}
		target = max(target, cur)
	}
	if target == 0 {
		if err := c.f.waitOwnWrites(ctx); err != nil {
			return watcher.Plan{}, err
		}
	}
	if err := c.f.waitFresh(ctx, target, c.cfg.ConsistentReadTimeout); err != nil || len(c.f.corruptIn(w.Scope())) > 0 {
		if ctx.Err() != nil {
			return watcher.Plan{}, err
		}
		// The cache is late, or holds no state for a corrupt key in the
		// watch's scope: the storage sends the initial state (or names
		// the corrupt key).
		return watcher.Plan{Pos: minRV, StorageInitial: true, StorageAnnotate: annotate}, nil
	}
	res, err := c.cache.List(0, watchcache.NotOlderThan, w.ListOptions(listIndex(c.cfg, w.Pred())))
	if err != nil {
		return watcher.Plan{}, err
	}
	return watcher.Plan{Pos: res.RV, Initial: &watcher.InitialState{Items: res.Items, RV: res.RV, Annotate: annotate}}, nil
}
