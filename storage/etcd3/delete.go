package etcd3

import (
	"context"
	"fmt"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/storage"
)

// Delete implements storage.Interface.
//
// Preconditions and validateDeletion run against cachedExistingObject first
// when given; a failure on a possibly stale state is re-checked on a fresh
// read and returned only if the stored revision is the one that failed. The
// delete is a compare-and-swap on the mod revision, retried on conflict with
// the state the failed transaction returned. With opts.IgnoreStoreReadError a
// value that cannot be transformed or decoded is deleted without checks and
// out is left untouched.
func (s *Store) Delete(ctx context.Context, key string, out runtime.Object, preconditions *storage.Preconditions,
	validateDeletion storage.ValidateObjectFunc, cachedExistingObject runtime.Object, opts storage.DeleteOptions) error {
	etcdKey, err := s.prepareKey(key)
	if err != nil {
		return err
	}
	if _, err := conversion.EnforcePtr(out); err != nil {
		return storage.NewInvalidArgumentError(fmt.Sprintf("out %T must be a pointer", out), err)
	}
	if validateDeletion == nil {
		validateDeletion = storage.ValidateAllObjectFunc
	}
	if err := ctx.Err(); err != nil {
		return ctxError(ctx, "delete")
	}
	read := func() (*objState, error) {
		return s.readState(ctx, key, etcdKey, out, false, opts.IgnoreStoreReadError)
	}
	st, current, err := s.initialState(key, cachedExistingObject, read)
	if err != nil {
		return err
	}
	for {
		if err := ctx.Err(); err != nil {
			return ctxError(ctx, "delete")
		}
		if st.corrupt == nil {
			checkErr := preconditions.Check(key, st.obj)
			if checkErr == nil {
				checkErr = validateDeletion(ctx, st.obj)
			}
			if checkErr != nil {
				if st, err = recheck(st, current, checkErr, read); err != nil {
					return err
				}
				current = true
				continue
			}
		}
		done, next, err := s.deleteCAS(ctx, key, etcdKey, st, out, opts)
		if err != nil || done {
			return err
		}
		st, current = next, true
	}
}

// deleteCAS deletes etcdKey if its mod revision is still st.rev. It
// reports done after a successful delete (out filled), or the fresh state
// on conflict.
func (s *Store) deleteCAS(ctx context.Context, key, etcdKey string, st *objState, out runtime.Object,
	opts storage.DeleteOptions) (bool, *objState, error) {
	resp, err := s.client.KV.Txn(ctx).
		If(clientv3.Compare(clientv3.ModRevision(etcdKey), "=", st.rev)).
		Then(clientv3.OpDelete(etcdKey)).
		Else(clientv3.OpGet(etcdKey)).
		Commit()
	if err != nil {
		return false, nil, s.interpret(ctx, err, key, 0, "delete")
	}
	if !resp.Succeeded {
		next, err := s.stateFromTxn(ctx, key, etcdKey, resp, out, false, opts.IgnoreStoreReadError)
		return false, next, err
	}
	if st.corrupt != nil {
		s.logger.Warn("deleted a corrupt object", "key", key, "error", st.corrupt)
		return true, nil, nil
	}
	return true, nil, s.decodeInto(etcdKey, st.data, out, resp.Header.Revision)
}
