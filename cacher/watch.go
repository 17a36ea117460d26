package cacher

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/watchcache"
)

// watchPlan is where a new watch starts.
type watchPlan struct {
	pos             uint64        // deliver events after pos
	initial         *initialState // initial events from the cache, if any
	storageInitial  bool          // initial events from the storage (the cache lagged)
	storageAnnotate bool          // ... ending with the initial-events-end bookmark
	storageFirst    bool          // start from the storage: the RV is compacted there (it answers 410)
	slotHeld        bool          // a catch-up slot was taken for this watch
}

// initialState is the state a watch starts with.
type initialState struct {
	items    []*watchcache.Element
	rv       uint64
	annotate bool // end with the initial-events-end bookmark
}

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
	req, err := storage.ParseWatchRequest(opts, c.cfg.Versioner)
	if err != nil {
		return nil, err
	}
	eventsAfter := req.Start == storage.WatchAfterRev
	notServable := c.waitServable(ctx)
	_, ready := c.cache.RV()
	if notServable != nil && (ctx.Err() != nil || (!eventsAfter && !ready)) {
		return nil, notServable
	}
	w := c.env.newWatcher(key, opts)
	w.encoded = encoded
	if deadline, ok := ctx.Deadline(); ok && w.bookmarks {
		w.bookmarkAt = storage.DeadlineBookmarkTime(c.clk.wall.Now(), deadline)
	}
	switch {
	case notServable != nil && eventsAfter:
		// The cache is (re)initialising or revalidating: the events after
		// the RV come from etcd's history until the cache holds it again.
		w.plan = watchPlan{pos: req.Rev, storageFirst: true}
	case notServable != nil:
		// The cache holds a state it does not trust (a divergence or a
		// transformer change is being repaired by a relist): the storage
		// sends the initial state, or says where "now" is.
		if w.plan, err = c.planFromStorage(ctx, req); err != nil {
			return nil, err
		}
	default:
		if w.plan, err = c.planWatch(ctx, w, req); err != nil {
			return nil, err
		}
	}
	if w.plan.storageFirst || (w.plan.initial == nil && !c.cacheHolds(w.plan.pos)) {
		if !c.acquireSlot(ctx, c.cfg.CatchUpWaitTimeout) {
			return nil, &storage.Error{Code: storage.CodeTooManyRequests, RetryAfterSeconds: 1,
				Msg: "too many watches catching up from etcd history"}
		}
		w.plan.slotHeld = true
	}
	err = c.startWatcher(ctx, w)
	if err != nil {
		c.releaseSlot(w.plan.slotHeld)
		return nil, err
	}
	c.cfg.Metrics.WatchersChanged(1)
	return w, nil
}

// planWatch resolves the start req asks for (the etcd3 store's rules,
// see storage.ParseWatchRequest) from the cache.
func (c *Cacher) planWatch(ctx context.Context, w *watcher, req storage.WatchRequest) (watchPlan, error) {
	switch req.Start {
	case storage.WatchWithState:
		return c.planInitial(ctx, w, req.Rev, req.Consistent, req.Annotate)
	case storage.WatchFromNow:
		cur, err := c.currentRV(ctx)
		if err != nil {
			return watchPlan{}, err
		}
		return watchPlan{pos: cur}, nil
	}
	rv := req.Rev
	// A client RV that etcd has compacted gets etcd's answer (410), even
	// if the cache still holds the events after it.
	if err := c.learnCompaction(ctx, rv, false); err != nil {
		return watchPlan{}, err
	}
	// etcd compacted rv when rv < its compact revision; the storage answers.
	if compacted := c.cache.Compacted(); rv < compacted {
		return watchPlan{pos: rv, storageFirst: true}, nil
	}
	return watchPlan{pos: rv}, nil
}

// planFromStorage resolves, while the cache cannot be trusted, the start of
// a watch that does not ask only for the events after an explicit RV
// (storage.WatchAfterRev): the storage sends the initial state (not older
// than req.Rev), or the watch starts after the storage's current revision.
func (c *Cacher) planFromStorage(ctx context.Context, req storage.WatchRequest) (watchPlan, error) {
	if req.Start == storage.WatchFromNow {
		cur, err := c.currentRV(ctx)
		if err != nil {
			return watchPlan{}, err
		}
		return watchPlan{pos: cur, storageFirst: true}, nil
	}
	return watchPlan{pos: req.Rev, storageInitial: true, storageAnnotate: req.Annotate}, nil
}

// planInitial takes the state a watch with initial events starts from: the
// cache's current state, once it is at least minRV and, when consistent,
// at least the storage's current revision (at RV "0", once it holds this
// cacher's own writes, see waitOwnWrites). When the cache does not get
// there in time, the storage sends the initial state instead.
func (c *Cacher) planInitial(ctx context.Context, w *watcher, minRV uint64, consistent, annotate bool) (watchPlan, error) {
	target := minRV
	if consistent {
		cur, err := c.currentRV(ctx)
		if err != nil {
			return watchPlan{}, err
		}
		target = max(target, cur)
	}
	if target == 0 {
		if err := c.waitOwnWrites(ctx); err != nil {
			return watchPlan{}, err
		}
	}
	if err := c.waitFresh(ctx, target, c.cfg.ConsistentReadTimeout); err != nil || len(c.corruptIn(w.scope())) > 0 {
		if ctx.Err() != nil {
			return watchPlan{}, err
		}
		// The cache is late, or holds no state for a corrupt key in the
		// watch's scope: the storage sends the initial state (or names
		// the corrupt key).
		return watchPlan{pos: minRV, storageInitial: true, storageAnnotate: annotate}, nil
	}
	res, err := c.cache.List(0, watchcache.NotOlderThan, c.watcherListOptions(w))
	if err != nil {
		return watchPlan{}, err
	}
	return watchPlan{pos: res.RV, initial: &initialState{items: res.Items, rv: res.RV, annotate: annotate}}, nil
}

// scope is the key prefix the watch covers, and whether it is recursive.
func (w *watcher) scope() (string, bool) {
	if w.recursive {
		return w.prefix, true
	}
	return w.key, false
}

// watcherListOptions selects w's objects in the cache.
func (c *Cacher) watcherListOptions(w *watcher) watchcache.ListOptions {
	q := watchcache.ListOptions{Key: w.key, Recursive: w.recursive}
	if w.recursive {
		q.Key = w.prefix
	}
	if !w.emptyPred {
		q.Filter = w.matches
	}
	q.Index = c.listIndex(w.pred)
	return q
}

// errorStatus is the Status of a watch error event for err: storage's
// one mapping (storage.StatusOf), which FromStatus undoes on the
// consumer's side.
func errorStatus(err error) *metav1.Status {
	st := storage.StatusOf(err)
	return &st
}
