package cacher

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/watchcache"
)

// Get implements storage.Interface. An unset RV reads the storage (linearizable);
// any other RV is served from the cache once it has reached that RV.
func (c *Cacher) Get(ctx context.Context, key string, opts storage.GetOptions, objPtr runtime.Object) error {
	if err := storage.ValidateKey(key, c.cfg.ResourcePrefix, false); err != nil {
		return err
	}
	if err := c.f.checkReachable(ctx, opts.ResourceVersion); err != nil {
		return err
	}
	rv := opts.ResourceVersion.Revision()
	if c.f.routeGet(ctx, key, opts.ResourceVersion).toStorage(c.f.log, "get", key) {
		return c.store.Get(ctx, key, opts, objPtr)
	}
	var err error
	if rv == 0 {
		err = c.f.waitOwnWrites(ctx)
	} else {
		err = c.f.waitFresh(ctx, rv, c.cfg.FreshWaitTimeout)
	}
	if err != nil {
		return err
	}
	el, cur, ok, err := c.cache.Get(key)
	if err != nil {
		return err
	}
	if c.f.afterWait(key, false, byCache).toStorage(c.f.log, "get", key) {
		return c.store.Get(ctx, key, opts, objPtr)
	}
	if !ok {
		if opts.IgnoreNotFound {
			return setZero(objPtr)
		}
		return storage.NewNotFoundError(key, int64(cur))
	}
	obj, err := el.Object()
	if err != nil {
		return err
	}
	if !storage.SetObject(objPtr, obj.DeepCopyObject()) {
		return storage.NewInvalidObjError(key, fmt.Sprintf("cannot decode %T into %T", obj, objPtr))
	}
	return nil
}

func setZero(dst runtime.Object) error {
	out := reflect.ValueOf(dst)
	if out.Kind() != reflect.Pointer || out.IsNil() {
		return storage.NewInvalidObjError("", fmt.Sprintf("cannot zero %T", dst))
	}
	out.Elem().Set(reflect.Zero(out.Elem().Type()))
	return nil
}

// GetList implements storage.Interface. See the package doc for which RVs
// are served from memory; the rest, and everything while the cache is not
// ready, are served by the storage.
func (c *Cacher) GetList(ctx context.Context, key string, opts storage.ListOptions, listObj runtime.Object) error {
	prefix := listPrefix(key, opts.Recursive)
	fill := func(res watchcache.ListResult) error { return c.fillList(listObj, prefix, opts, res) }
	res, filled, r, err := c.listCached(ctx, key, prefix, opts, fill)
	if err == nil && r.toStorage(c.f.log, "list", key) {
		// The cache may have filled listObj before giving up; the storage
		// appends to its items.
		if err := meta.SetList(listObj, nil); err != nil {
			return err
		}
		c.cfg.Metrics.ListServed("storage")
		return c.store.GetList(ctx, key, opts, listObj)
	}
	if err != nil || filled {
		return err
	}
	return fill(res)
}

// GetListEncoded implements storage.EncodedLister: GetList for callers
// that can use the cache's encodings as they are, such as an HTTP server
// writing the format Config.Codec names (EncodedFormat): the items are
// the cached encodings (which callers must not modify), with no decoding.
// It reports false, having done nothing, when the cache keeps decoded
// objects or the storage must answer the list; the caller then calls
// GetList.
func (c *Cacher) GetListEncoded(ctx context.Context, key string, opts storage.ListOptions) (storage.EncodedList, bool, error) {
	if c.cfg.Codec == nil {
		return storage.EncodedList{}, false, nil
	}
	prefix := listPrefix(key, opts.Recursive)
	res, _, r, err := c.listCached(ctx, key, prefix, opts, nil)
	if err != nil {
		return storage.EncodedList{}, true, err
	}
	if r.storage {
		return storage.EncodedList{}, false, nil
	}
	out := storage.EncodedList{Items: make([][]byte, len(res.Items)), ResourceVersion: res.RV}
	for i, el := range res.Items {
		out.Items[i], _ = el.Encoded()
	}
	out.Continue, out.RemainingItemCount, err = listMeta(prefix, opts, res)
	return out, true, err
}

// EncodedFormat implements storage.EncodedLister: the format Config.Codec
// names (storage.FormatNamer), "" without a codec or a name.
func (c *Cacher) EncodedFormat() string {
	if f, ok := c.cfg.Codec.(storage.FormatNamer); ok {
		return f.Format()
	}
	return ""
}

// listCached serves a list of key (covering prefix, see listPrefix) from
// the cache, unless the route it returns says the storage must answer it
// (see route.go). prefill, when set, is how the caller turns the result
// into its answer; filled reports that it has done so with the result
// returned (see listFromCache).
func (c *Cacher) listCached(ctx context.Context, key, prefix string, opts storage.ListOptions,
	prefill func(watchcache.ListResult) error) (res watchcache.ListResult, filled bool, r route, err error) {
	if err := storage.ValidateKey(key, c.cfg.ResourcePrefix, opts.Recursive); err != nil {
		return res, false, r, err
	}
	if opts.Predicate.Limit < 0 {
		return res, false, r, storage.NewInvalidArgumentError(fmt.Sprintf("negative limit %d", opts.Predicate.Limit), nil)
	}
	if err := c.f.checkReachable(ctx, opts.ResourceVersion); err != nil {
		return res, false, r, err
	}
	plan, err := planList(prefix, opts)
	if err != nil {
		return res, false, r, err
	}
	if r = c.f.routeList(ctx, prefix, opts.Recursive); r.storage {
		return res, false, r, nil
	}
	res, filled, r, err = c.listFromCache(ctx, plan, cacheQuery(c.cfg, prefix, opts, plan), prefill)
	if err != nil {
		return res, filled, r, err
	}
	if r = c.f.afterWait(prefix, opts.Recursive, r); r.storage {
		return watchcache.ListResult{}, false, r, nil
	}
	c.cfg.Metrics.ListServed("cache")
	return res, filled, r, nil
}

// listFromCache reads the cache as plan says, unless the route it returns
// sends the read to the storage (the cache no longer holds the RV, or a
// consistent read timed out). A consistent read asks the storage for its current revision; with
// prefill, it lists the cache and runs prefill meanwhile, and when the
// cache already held that revision the prefilled answer stands (filled):
// it holds every write finished before the request, and the etcd round
// trip costs no time of its own. An exact read overlaps its compaction
// check with the list in the same way (listExact).
func (c *Cacher) listFromCache(ctx context.Context, plan listPlan, q watchcache.ListOptions,
	prefill func(watchcache.ListResult) error) (watchcache.ListResult, bool, route, error) {
	switch {
	case plan.exact > 0:
		return c.listExact(ctx, plan.exact, q, prefill)
	case plan.consistent:
		type current struct {
			rv  uint64
			err error
		}
		asked := make(chan current, 1)
		go func() {
			rv, err := c.f.currentRV(ctx)
			asked <- current{rv, err}
		}()
		var early watchcache.ListResult
		filled := false
		if prefill != nil {
			if res, err := c.cache.List(0, watchcache.NotOlderThan, q); err == nil && prefill(res) == nil {
				early, filled = res, true
			}
		}
		cur := <-asked
		if cur.err != nil {
			return watchcache.ListResult{}, false, byCache, cur.err
		}
		if filled && early.RV >= cur.rv {
			return early, true, byCache, nil
		}
		if err := c.f.waitFresh(ctx, cur.rv, c.cfg.ConsistentReadTimeout); err != nil {
			if ctx.Err() != nil {
				return watchcache.ListResult{}, false, byCache, err
			}
			return watchcache.ListResult{}, false, byStorage(whyLate), nil
		}
		res, err := c.cache.List(cur.rv, watchcache.NotOlderThan, q)
		return res, false, byCache, err
	}
	wait := c.f.waitOwnWrites
	if plan.minRV > 0 {
		wait = func(ctx context.Context) error { return c.f.waitFresh(ctx, plan.minRV, c.cfg.FreshWaitTimeout) }
	}
	if err := wait(ctx); err != nil {
		return watchcache.ListResult{}, false, byCache, err
	}
	res, err := c.cache.List(plan.minRV, watchcache.NotOlderThan, q)
	return res, false, byCache, err
}

// listExact reads the cache's state at exactly rv. Whether etcd has
// compacted rv is asked of the storage (learnCompaction) while the cache
// lists and prefill runs: the answer stands only when rv is still above
// the compacted revision once the storage has answered; a compacted rv (or
// one the cache no longer holds) is routed to the storage, whose answer is
// then 410 Gone.
func (c *Cacher) listExact(ctx context.Context, rv uint64, q watchcache.ListOptions,
	prefill func(watchcache.ListResult) error) (watchcache.ListResult, bool, route, error) {
	if err := c.f.waitFresh(ctx, rv, c.cfg.FreshWaitTimeout); err != nil {
		return watchcache.ListResult{}, false, byCache, err
	}
	learned := make(chan error, 1)
	go func() { learned <- c.f.learnCompaction(ctx, rv, true) }()
	res, err := c.cache.List(rv, watchcache.Exact, q)
	filled := false
	if err == nil && prefill != nil {
		if err = prefill(res); err != nil {
			// The answer is an error unless rv turns out compacted.
			res = watchcache.ListResult{}
		}
		filled = err == nil
	}
	if lerr := <-learned; lerr != nil {
		return watchcache.ListResult{}, false, byCache, lerr
	}
	if rv < c.cache.Compacted() || errors.Is(err, storage.ErrGone) {
		return watchcache.ListResult{}, false, byStorage(whyNotHeld), nil
	}
	return res, filled, byCache, err
}

// cacheQuery is the cache's query for a list of prefix with opts, as plan
// resolved it.
func cacheQuery(cfg Config, prefix string, opts storage.ListOptions, plan listPlan) watchcache.ListOptions {
	q := watchcache.ListOptions{Key: prefix, Recursive: opts.Recursive, StartKey: plan.startKey,
		Limit: int(opts.Predicate.Limit), Index: listIndex(cfg, opts.Predicate)}
	pred := opts.Predicate
	if !pred.Empty() {
		q.Filter = func(el *watchcache.Element) bool { return el.Matches(&pred) }
	} else {
		q.CountRemaining = opts.Predicate.Limit > 0
	}
	return q
}

// fillList writes a cache page into listObj with its RV and continue token.
func (c *Cacher) fillList(listObj runtime.Object, prefix string, opts storage.ListOptions, res watchcache.ListResult) error {
	if err := setItems(listObj, res.Items); err != nil {
		return err
	}
	next, remaining, err := listMeta(prefix, opts, res)
	if err != nil {
		return err
	}
	return c.cfg.Versioner.UpdateList(listObj, res.RV, next, remaining)
}

// listMeta returns a cache page's continue token and remaining item count.
func listMeta(prefix string, opts storage.ListOptions, res watchcache.ListResult) (string, *int64, error) {
	if !res.More || !opts.Recursive {
		return "", nil, nil
	}
	next, err := storage.EncodeContinue(res.NextKey, prefix, int64(res.RV))
	if err != nil {
		return "", nil, fmt.Errorf("cacher: encoding continue token: %w", err)
	}
	if opts.Predicate.Empty() {
		return next, &res.Remaining, nil
	}
	return next, nil, nil
}
