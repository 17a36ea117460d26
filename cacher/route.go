package cacher

import (
	"context"
	"log/slog"

	"github.com/listwatch/listwatch/storage"
)

// Who answers a read. Every Get, GetList and Watch is routed here, once
// before the cache is tried (routeGet, routeList, routeWatch) and, for the
// answers the cache can only give after waiting, once more with what the
// wait found (afterWait): each returns a route, a decision value that
// reads.go and watch.go carry out. No other code decides that the storage
// answers a read.
//
// The cache answers unless:
//   - the read asks for a linearizable state the cache cannot promise (a
//     Get at RV "");
//   - the cache is not ready (its first list has not landed within
//     ReadyWaitTimeout) or its content is not trusted (a relist after a
//     transformer change, a divergence or a failing storage watch is
//     pending, see feed_revalidate.go);
//   - the read's scope holds a corrupt key, which only the storage can name
//     (feed_corrupt.go);
//   - the cache no longer holds the RV asked for (an exact list or continue
//     token older than its snapshots), or etcd compacted it (the storage
//     answers 410);
//   - a consistent read (RV "") waited ConsistentReadTimeout for the cache
//     to reach the storage's current revision in vain.
//
// A watch is routed the same way, with one more answer: a watch of the
// events after an RV while the cache is not servable starts from the
// storage's history and moves to the cache once it holds that RV.
//
// Before any of that, a read or watch at an RV no revision can reach is
// answered by nobody (checkReachable): too large resource version, at
// once. An RV the storage may still reach (newer than the cache) is waited
// for, at most FreshWaitTimeout, and then answered too large.

// route is who answers a read, and why when it is not the cache.
type route struct {
	// storage: the storage answers; the cache answers otherwise.
	storage bool
	// why says which rule sent the read to the storage (one of the why*
	// constants), logged at debug level (see toStorage).
	why string
}

// toStorage reports whether the storage answers, logging why at debug
// level when it does.
func (r route) toStorage(log *slog.Logger, op, key string) bool {
	if r.storage {
		log.Debug("cacher: the storage answers", "op", op, "key", key, "why", r.why)
	}
	return r.storage
}

// Why the storage answers a read.
const (
	whyLinearizable = "a linearizable read"
	whyNotReady     = "the cache is not ready"
	whyUntrusted    = "the cache's content is not trusted"
	whyCorrupt      = "a corrupt key is in the read's scope"
	whyNotHeld      = "the cache does not hold the resource version, or etcd compacted it"
	whyLate         = "the cache did not reach the storage's current revision in time"
)

// byCache is the decision that the cache answers.
var byCache = route{}

// byStorage is the decision that the storage answers, for why.
func byStorage(why string) route { return route{storage: true, why: why} }

// checkReachable answers a read or watch at an RV above any revision etcd
// can have: too large resource version at once, naming the storage's
// current revision (storage.CheckReachable); waiting FreshWaitTimeout for
// it could not help. nil for every other RV.
func (f *feed) checkReachable(ctx context.Context, rv storage.RV) error {
	return storage.CheckReachable(ctx, rv, f.currentRV)
}

// routeGet decides who answers a Get of key at RV rv (unset is a
// linearizable read), waiting at most ReadyWaitTimeout for the first list.
func (f *feed) routeGet(ctx context.Context, key string, rv storage.RV) route {
	if rv.IsUnset() {
		return byStorage(whyLinearizable)
	}
	return f.routeList(ctx, key, false)
}

// routeList decides who answers a read of prefix (recursive or one key),
// waiting at most ReadyWaitTimeout for the first list.
func (f *feed) routeList(ctx context.Context, prefix string, recursive bool) route {
	switch {
	case !f.trusted():
		return byStorage(whyUntrusted)
	case f.waitReady(ctx) != nil:
		return byStorage(whyNotReady)
	case len(f.corruptIn(prefix, recursive)) > 0:
		return byStorage(whyCorrupt)
	}
	return byCache
}

// afterWait decides again, once the cache has waited to be fresh for a
// read of prefix: a key the cache cannot hold may have joined its scope
// meanwhile (see feed_uncacheable.go), and held reports whether the cache
// still holds the state asked for (false: a consistent read timed out,
// late, or an exact RV is not held or compacted).
func (f *feed) afterWait(prefix string, recursive bool, held route) route {
	if held.storage {
		return held
	}
	if len(f.corruptIn(prefix, recursive)) > 0 {
		return byStorage(whyCorrupt)
	}
	return byCache
}

// watchRoute is where a new watch starts.
type watchRoute int

const (
	// watchFromCache: the cache plans the start (planWatch).
	watchFromCache watchRoute = iota
	// watchHistoryFirst: the events after the RV come from the storage's
	// history until the cache, being (re)initialised or revalidated, holds
	// it again.
	watchHistoryFirst
	// watchStorageState: the cache holds a state it does not trust; the
	// storage sends the initial state, or says where "now" is.
	watchStorageState
)

// routeWatch decides where a watch of req starts, waiting at most
// ReadyWaitTimeout for the cache to be ready and trusted; an error when
// neither the cache nor the storage can serve it now (not ready, and the
// watch is not one of the events after an RV).
func (f *feed) routeWatch(ctx context.Context, req storage.WatchRequest) (watchRoute, error) {
	eventsAfter := req.Start == storage.WatchAfterRev
	notServable := f.waitServable(ctx)
	if notServable == nil {
		return watchFromCache, nil
	}
	_, ready := f.cache.RV()
	switch {
	case ctx.Err() != nil || (!eventsAfter && !ready):
		return 0, notServable
	case eventsAfter:
		return watchHistoryFirst, nil
	}
	return watchStorageState, nil
}

// waitReady waits at most ReadyWaitTimeout for the first list.
func (f *feed) waitReady(ctx context.Context) error {
	if _, ready := f.cache.RV(); ready {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, f.cfg.ReadyWaitTimeout)
	defer cancel()
	return f.explainNotReady(f.cache.WaitUntilFresh(ctx, 0))
}
