package etcd3

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/storage"
)

// listPlan is what a GetList request resolves to before touching etcd.
type listPlan struct {
	withRev      int64  // revision to read at; 0 = latest
	minRV        uint64 // for reads at latest: the state must be at least this new
	startKey     string // etcd key to start from (recursive lists)
	fromContinue bool   // the plan comes from a continue token
}

// planList validates the RV, RV match and continue options of a list.
func (s *Store) planList(keyPrefix string, opts storage.ListOptions) (listPlan, error) {
	r, err := storage.ParseListRequest(opts, keyPrefix)
	if err != nil {
		return listPlan{}, err
	}
	p := listPlan{withRev: int64(r.Exact), minRV: r.MinRV, startKey: keyPrefix}
	if r.StartKey != "" {
		p.startKey, p.fromContinue = r.StartKey, true
	}
	return p, nil
}

// GetList implements storage.Interface.
func (s *Store) GetList(ctx context.Context, key string, opts storage.ListOptions, listObj runtime.Object) error {
	var etcdKey string
	var err error
	if opts.Recursive {
		etcdKey, err = s.prepareRecursiveKey(key)
	} else {
		etcdKey, err = s.prepareKey(key)
	}
	if err != nil {
		return err
	}
	if opts.Predicate.Limit < 0 {
		return storage.NewInvalidArgumentError(fmt.Sprintf("negative limit %d", opts.Predicate.Limit), nil)
	}
	if err := storage.CheckReachable(ctx, opts.ResourceVersion, s.GetCurrentResourceVersion); err != nil {
		return err
	}
	plan, err := s.planList(etcdKey, opts)
	if err != nil {
		return err
	}
	app, err := newListAppender(listObj, s.maxCorrupt)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return ctxError(ctx, "list")
	}
	if !opts.Recursive {
		return s.listOne(ctx, key, etcdKey, plan, opts.Predicate, app, listObj)
	}
	return s.listRange(ctx, key, etcdKey, plan, opts.Predicate, app, listObj)
}

// listOne serves a non-recursive list: the object at one key, if it matches.
func (s *Store) listOne(ctx context.Context, key, etcdKey string, plan listPlan, pred storage.SelectionPredicate,
	app *listAppender, listObj runtime.Object) error {
	var ops []clientv3.OpOption
	if plan.withRev > 0 {
		ops = append(ops, clientv3.WithRev(plan.withRev))
	}
	resp, err := s.kv.Get(ctx, etcdKey, ops...)
	if err != nil {
		return s.interpret(ctx, err, key, plan.withRev, "list")
	}
	if err := checkMinimumRV(plan.minRV, resp.Header.Revision); err != nil {
		return err
	}
	if len(resp.Kvs) > 0 {
		if err := s.appendKV(ctx, app, resp.Kvs[0], pred); err != nil {
			return err
		}
	}
	rev := plan.withRev
	if rev == 0 {
		rev = resp.Header.Revision
	}
	return s.versioner.UpdateList(listObj, uint64(rev), "", nil)
}

// appendKV decodes kv and appends it to the list when pred matches it.
func (s *Store) appendKV(ctx context.Context, app *listAppender, kv *mvccpb.KeyValue, pred storage.SelectionPredicate) error {
	data, _, err := s.fromStorage(ctx, string(kv.Key), kv.Value)
	if err != nil {
		return err
	}
	obj := app.newItem()
	if err := s.decodeInto(string(kv.Key), data, obj, kv.ModRevision); err != nil {
		return err
	}
	ok, err := pred.Matches(obj)
	if err != nil {
		return fmt.Errorf("etcd3: matching %q: %w", s.userKey(string(kv.Key)), err)
	}
	if ok {
		app.append(obj)
	}
	return nil
}

// appendKVs decodes and appends the matching items of resp until the page
// is full (pred.Limit, if any). It returns the last key evaluated and
// whether it stopped because the page was full with keys left in resp.
func (s *Store) appendKVs(ctx context.Context, app *listAppender, resp *clientv3.GetResponse,
	pred storage.SelectionPredicate, lastKey string) (string, bool, error) {
	if pred.Empty() { // every value becomes an item: size the list once
		n := int64(len(resp.Kvs))
		if pred.Limit > 0 {
			n = min(n, pred.Limit-int64(app.len()))
		}
		app.reserve(int(n))
	}
	for i, kv := range resp.Kvs {
		if pred.Limit > 0 && int64(app.len()) >= pred.Limit {
			return lastKey, true, nil
		}
		lastKey = string(kv.Key)
		if err := s.appendKV(ctx, app, kv, pred); err != nil {
			if err := app.readFailed(err); err != nil {
				return lastKey, false, err
			}
		}
		resp.Kvs[i] = nil // let the decoded value's bytes go early
	}
	return lastKey, false, nil
}

// listRange serves a recursive list: a range over keyPrefix starting at
// plan.startKey, pinned to one revision, paginated by pred.Limit.
func (s *Store) listRange(ctx context.Context, key, keyPrefix string, plan listPlan, pred storage.SelectionPredicate,
	app *listAppender, listObj runtime.Object) error {
	rangeEnd := clientv3.GetPrefixRangeEnd(keyPrefix)
	limit := pred.Limit
	paging := limit > 0
	batch := limit
	withRev := plan.withRev
	from := plan.startKey
	var lastKey string
	var resp *clientv3.GetResponse
	hasMore := false
	for {
		ops := []clientv3.OpOption{clientv3.WithRange(rangeEnd)}
		if paging {
			ops = append(ops, clientv3.WithLimit(batch))
		}
		if withRev > 0 {
			ops = append(ops, clientv3.WithRev(withRev))
		}
		var err error
		resp, err = s.kv.Get(ctx, from, ops...)
		if err != nil {
			return s.listError(ctx, err, key, keyPrefix, plan)
		}
		if withRev == 0 {
			if err := checkMinimumRV(plan.minRV, resp.Header.Revision); err != nil {
				return err
			}
			withRev = resp.Header.Revision
		}
		if len(resp.Kvs) == 0 && resp.More {
			return errors.New("etcd3: etcd returned no keys but reported more")
		}
		var full bool
		if lastKey, full, err = s.appendKVs(ctx, app, resp, pred, lastKey); err != nil {
			return err
		}
		hasMore = resp.More || full
		if !hasMore || !paging || int64(app.len()) >= limit {
			break
		}
		// The predicate dropped items: fetch a bigger batch next time.
		if batch < s.maxListBatch {
			batch = min(batch*2, max(s.maxListBatch, limit))
		}
		from = lastKey + "\x00"
		if err := ctx.Err(); err != nil {
			return ctxError(ctx, "list")
		}
	}
	if err := app.corruptError(); err != nil {
		return err
	}
	if !hasMore {
		return s.versioner.UpdateList(listObj, uint64(withRev), "", nil)
	}
	return s.finishPage(listObj, keyPrefix, lastKey, withRev, pred, resp.Count)
}

// finishPage sets the list's RV and the continue token that resumes after
// lastKey. remainingItemCount is set only for an empty predicate, where
// count (the keys the last range found from its start) minus the page is
// exact: such a page was filled by a single range.
func (s *Store) finishPage(listObj runtime.Object, keyPrefix, lastKey string, rev int64,
	pred storage.SelectionPredicate, count int64) error {
	next, err := storage.EncodeContinue(lastKey+"\x00", keyPrefix, rev)
	if err != nil {
		return fmt.Errorf("etcd3: encoding continue token: %w", err)
	}
	if pred.Empty() {
		remaining := count - pred.Limit
		return s.versioner.UpdateList(listObj, uint64(rev), next, &remaining)
	}
	return s.versioner.UpdateList(listObj, uint64(rev), next, nil)
}

// listError maps a range error; a compacted continue token gets a 410 whose
// message carries a token to continue, inconsistently, at the latest state.
func (s *Store) listError(ctx context.Context, err error, key, keyPrefix string, plan listPlan) error {
	if plan.fromContinue && errors.Is(err, rpctypes.ErrCompacted) {
		e := storage.NewGoneError(plan.withRev, 0)
		e.Key = key
		if fresh, encErr := storage.EncodeContinue(plan.startKey, keyPrefix, -1); encErr == nil {
			e.Msg = "The provided continue parameter is too old to display a consistent list result. " +
				"You can start a new list without the continue parameter, or use the continue token " +
				"in this message to retrieve the remainder of the results (an inconsistent list): continue=" + fresh
			e.Continue = fresh
		}
		return e
	}
	return s.interpret(ctx, err, key, plan.withRev, "list")
}
