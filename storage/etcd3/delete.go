package etcd3

import (
	"context"
	"fmt"
	"reflect"

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
// the state the failed transaction returned. opts.IgnoreStoreReadError is
// the unsafe path for a value that cannot be transformed or decoded: the
// value is deleted without preconditions (validateDeletion gets a nil
// object) and out is left untouched; if the value can be read, at first or
// after a conflicting write, the delete fails with ErrInvalidObj.
//
// out is the store's decoding of the deleted value from the read that
// preceded the delete, or, for a suggestion with opts.SuggestionDecoded
// (the store's own decoding of that value), a
// copy of the suggestion: no second decoding (validateDeletion is given a
// copy). An unmarked suggestion's encoding is decoded into out.
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
	if opts.IgnoreStoreReadError {
		cachedExistingObject = nil // only the stored bytes tell whether the object is corrupt
	}
	// The encoding of a suggestion fills out after the delete, unless the
	// suggestion is the store's own decoding of the stored value (of out's
	// type): then out becomes a copy of it (see deleteCAS).
	copyOut := cachedExistingObject != nil && opts.SuggestionDecoded &&
		reflect.TypeOf(cachedExistingObject) == reflect.TypeOf(out)
	st, current, err := s.initialState(key, cachedExistingObject, !copyOut, read)
	if err != nil {
		return err
	}
	for {
		if err := ctx.Err(); err != nil {
			return ctxError(ctx, "delete")
		}
		if opts.IgnoreStoreReadError {
			if err := s.checkUnsafeDelete(ctx, key, st, validateDeletion); err != nil {
				return err
			}
		} else {
			checkErr := preconditions.Check(key, st.obj)
			if checkErr == nil {
				// A copy: st.obj becomes out after the delete (see deleteCAS).
				checkErr = validateDeletion(ctx, st.obj.DeepCopyObject())
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

// checkUnsafeDelete guards the unsafe path (IgnoreStoreReadError) on the
// state about to be deleted: it applies only to a value that cannot be
// read, and then validateDeletion is called with a nil object (there is no
// object to check preconditions on).
func (s *Store) checkUnsafeDelete(ctx context.Context, key string, st *objState, validateDeletion storage.ValidateObjectFunc) error {
	if st.corrupt == nil {
		return storage.NewInvalidObjError(key, "unsafe deletion is not allowed because the object is decodable from storage")
	}
	return validateDeletion(ctx, nil)
}

// deleteCAS deletes etcdKey if its mod revision is still st.rev. It
// reports done after a successful delete (out filled), or the fresh state
// on conflict.
func (s *Store) deleteCAS(ctx context.Context, key, etcdKey string, st *objState, out runtime.Object,
	opts storage.DeleteOptions) (bool, *objState, error) {
	resp, err := s.kv.Txn(ctx).
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
	if !st.suggested || st.data == nil {
		// st.obj is the store's own decoding of the value deleted, private
		// to this call: read from etcd, or a copy of a decoded suggestion
		// (not encoded, see Delete).
		if ok, err := s.setObject(etcdKey, st.obj, out, resp.Header.Revision); ok {
			return true, nil, err
		}
	}
	return true, nil, s.decodeInto(etcdKey, st.data, out, resp.Header.Revision)
}
