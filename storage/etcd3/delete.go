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
	var st *objState
	current := false
	if cachedExistingObject != nil {
		st, err = s.stateFromObject(key, cachedExistingObject)
	} else {
		st, err = read()
		current = true
	}
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
				if current {
					return checkErr
				}
				cachedRev := st.rev
				if st, err = read(); err != nil {
					return err
				}
				current = true
				if st.rev == cachedRev {
					return checkErr
				}
				continue
			}
		}
		resp, err := s.client.KV.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(etcdKey), "=", st.rev)).
			Then(clientv3.OpDelete(etcdKey)).
			Else(clientv3.OpGet(etcdKey)).
			Commit()
		if err != nil {
			return s.interpret(ctx, err, key, 0, "delete")
		}
		if !resp.Succeeded {
			if st, err = s.stateFromTxn(ctx, key, etcdKey, resp, out, false, opts.IgnoreStoreReadError); err != nil {
				return err
			}
			current = true
			continue
		}
		if st.corrupt != nil {
			s.logger.Warn("deleted a corrupt object", "key", key, "error", st.corrupt)
			return nil
		}
		return s.decodeInto(etcdKey, st.data, out, resp.Header.Revision)
	}
}
