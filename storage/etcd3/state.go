package etcd3

import (
	"context"
	"fmt"

	"go.etcd.io/etcd/api/v3/mvccpb"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/storage"
)

// objState is the stored state of one key as seen by an update or delete.
type objState struct {
	obj   runtime.Object // decoded object (zero object when absent)
	meta  storage.ResponseMeta
	rev   int64  // mod revision; 0 when the key does not exist
	data  []byte // encoded (untransformed) bytes
	stale bool   // the transformer asked for a rewrite
	lease int64  // lease ID attached to the key, 0 if none
	// suggested: built from a caller's object (a suggestion), not read
	// from etcd; its lease is not known (lease is 0).
	suggested bool
	// corrupt is set instead of obj when the value could not be
	// transformed or decoded and the caller tolerates it.
	corrupt error
}

// newEmptyLike returns a new empty object of dest's type.
func newEmptyLike(dest runtime.Object) runtime.Object {
	if u, ok := dest.(runtime.Unstructured); ok {
		return u.NewEmptyInstance()
	}
	return newOf(dest)
}

// readState reads key's current state with a linearizable get.
func (s *Store) readState(ctx context.Context, key, etcdKey string, dest runtime.Object, ignoreNotFound, tolerateCorrupt bool) (*objState, error) {
	resp, err := s.kv.Get(ctx, etcdKey)
	if err != nil {
		return nil, s.interpret(ctx, err, key, 0, "get")
	}
	return s.stateFromKVs(ctx, key, etcdKey, resp.Kvs, dest, ignoreNotFound, tolerateCorrupt)
}

// stateFromRange builds the state from the Else branch of a failed txn.
func (s *Store) stateFromTxn(ctx context.Context, key, etcdKey string, resp *clientv3.TxnResponse, dest runtime.Object,
	ignoreNotFound, tolerateCorrupt bool) (*objState, error) {
	if len(resp.Responses) == 0 || resp.Responses[0].GetResponseRange() == nil {
		return nil, fmt.Errorf("etcd3: unexpected transaction response for %q", key)
	}
	return s.stateFromKVs(ctx, key, etcdKey, resp.Responses[0].GetResponseRange().Kvs, dest, ignoreNotFound, tolerateCorrupt)
}

func (s *Store) stateFromKVs(ctx context.Context, key, etcdKey string, kvs []*mvccpb.KeyValue, dest runtime.Object,
	ignoreNotFound, tolerateCorrupt bool) (*objState, error) {
	st := &objState{obj: newEmptyLike(dest)}
	if len(kvs) == 0 {
		if !ignoreNotFound {
			return nil, storage.NewNotFoundError(key, 0)
		}
		return st, nil
	}
	kv := kvs[0]
	st.rev, st.lease = kv.ModRevision, kv.Lease
	st.meta.ResourceVersion = uint64(kv.ModRevision)
	data, stale, err := s.fromStorage(ctx, etcdKey, kv.Value)
	if err == nil {
		st.data, st.stale = data, stale
		err = s.decodeInto(etcdKey, data, st.obj, kv.ModRevision)
	}
	if err != nil {
		if tolerateCorrupt && storage.IsCode(err, storage.CodeCorruptObj) {
			st.corrupt = err
			return st, nil
		}
		return nil, err
	}
	if kv.Lease != 0 {
		st.meta.TTL = s.remainingTTL(ctx, kv.Lease)
	}
	return st, nil
}

// remainingTTL asks etcd how long a lease still lives (0 on error).
func (s *Store) remainingTTL(ctx context.Context, lease int64) int64 {
	var resp *clientv3.LeaseTimeToLiveResponse
	err := s.kv.call(ctx, s.requestTimeout, false, func(ctx context.Context) (err error) {
		resp, err = s.client.Lease.TimeToLive(ctx, clientv3.LeaseID(lease))
		return err
	})
	if err != nil || resp.TTL < 0 {
		return 0
	}
	return resp.TTL
}

// stateFromObject builds a (possibly stale) state from a cached object,
// with its encoding when encode is set.
func (s *Store) stateFromObject(key string, cached runtime.Object, encode bool) (*objState, error) {
	obj := cached.DeepCopyObject()
	rv, err := s.versioner.ObjectResourceVersion(obj)
	if err != nil {
		return nil, storage.NewInvalidObjError(key, fmt.Sprintf("reading resourceVersion of the cached object: %v", err))
	}
	st := &objState{obj: obj, rev: int64(rv), meta: storage.ResponseMeta{ResourceVersion: rv}, suggested: true}
	if !encode {
		return st, nil
	}
	if err := s.versioner.PrepareObjectForStorage(obj); err != nil {
		return nil, storage.NewInvalidObjError(key, err.Error())
	}
	if st.data, err = s.encode(key, obj); err != nil {
		return nil, err
	}
	if err := s.versioner.UpdateObject(obj, rv); err != nil {
		return nil, storage.NewInvalidObjError(key, err.Error())
	}
	return st, nil
}

// initialState is the state an update or delete starts from: the cached
// object when given (not known to be current; encoded when encode is set),
// else a fresh read.
func (s *Store) initialState(key string, cached runtime.Object, encode bool, read func() (*objState, error)) (*objState, bool, error) {
	if cached != nil {
		st, err := s.stateFromObject(key, cached, encode)
		return st, false, err
	}
	st, err := read()
	return st, true, err
}

// recheck handles a check (precondition, validation, tryUpdate) that failed
// with checkErr on st. If st was read fresh, or a fresh read shows the same
// revision, checkErr stands and is returned. Otherwise st was stale and the
// fresh state is returned to retry with.
func recheck(st *objState, current bool, checkErr error, read func() (*objState, error)) (*objState, error) {
	if current {
		return nil, checkErr
	}
	fresh, err := read()
	if err != nil {
		return nil, err
	}
	if fresh.rev == st.rev {
		return nil, checkErr
	}
	return fresh, nil
}
