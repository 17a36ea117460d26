package etcd3

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/conversion"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/storage"
)

// GuaranteedUpdate implements storage.Interface.
//
// The loop starts from cachedExistingObject when given (a suggestion that
// may be stale) or from a fresh read. Whenever a precondition or tryUpdate
// fails on a state that was not read fresh, the key is re-read and the
// step retried; the error is returned only when it holds on the current
// state. The write is a compare-and-swap on the mod revision of the state
// tryUpdate saw (which pins its lease, see write); on conflict the state
// returned by the failed transaction is used for the next round. A result
// that encodes to the bytes of a suggestion is confirmed with a read-only
// transaction that compares the stored value and returns its revision (see
// confirmUnchanged) rather than read back and decoded. A no-op answers
// with a copy of an object the store decoded (the state read, or a
// suggestion the caller says is decoded: opts.SuggestionDecoded) where it can,
// rather than decode the stored value again.
//
// A suggestion carries no lease: tryUpdate is told TTL 0 and the write
// requires the key to have no lease. A key that has one fails that
// compare, so tryUpdate runs again on the state etcd returned, with the
// key's real TTL. (A no-op writes nothing and is settled without it.)
func (s *Store) GuaranteedUpdate(ctx context.Context, key string, destination runtime.Object, ignoreNotFound bool,
	preconditions *storage.Preconditions, tryUpdate storage.UpdateFunc, cachedExistingObject runtime.Object, opts storage.UpdateOptions) error {
	etcdKey, err := s.prepareKey(key)
	if err != nil {
		return err
	}
	if _, err := conversion.EnforcePtr(destination); err != nil {
		return storage.NewInvalidArgumentError(fmt.Sprintf("destination %T must be a pointer", destination), err)
	}
	if err := ctx.Err(); err != nil {
		return ctxError(ctx, "update")
	}
	u := &updater{s: s, ctx: ctx, key: key, etcdKey: etcdKey, dest: destination, ignoreNotFound: ignoreNotFound}
	if cachedExistingObject != nil && opts.SuggestionDecoded {
		u.decoded = cachedExistingObject
	}
	st, current, err := s.initialState(key, cachedExistingObject, true, u.read)
	if err != nil {
		return err
	}
	for {
		if err := ctx.Err(); err != nil {
			return ctxError(ctx, "update")
		}
		// A state read from etcd is the store's decoding of the stored
		// value; tryUpdate may change it, so a copy (a fraction of a
		// decoding's cost) answers a no-op without decoding again.
		var unchanged runtime.Object
		if current && st.rev != 0 && !st.stale {
			unchanged = st.obj.DeepCopyObject()
		}
		out, ttl, checkErr := u.apply(st, preconditions, tryUpdate)
		if checkErr != nil {
			if st, err = recheck(st, current, checkErr, u.read); err != nil {
				return err
			}
			current = true
			continue
		}
		data, err := s.encode(key, out)
		if err != nil {
			return err
		}
		if !st.stale && st.rev != 0 && bytes.Equal(data, st.data) {
			if current {
				if ok, err := s.setObject(etcdKey, unchanged, destination, st.rev); ok {
					return err
				}
				return s.decodeInto(etcdKey, st.data, destination, st.rev)
			}
			// The suggestion may be stale: confirm against etcd.
			done, next, err := u.confirmUnchanged(st, data)
			if err != nil || done {
				return err
			}
			st, current = next, true
			continue
		}
		done, next, err := u.write(st, data, ttl)
		if err != nil || done {
			return err
		}
		if next != st { // a conflict: go on from the state etcd returned
			st, current = next, true
		}
	}
}

// updater holds the per-call state of GuaranteedUpdate.
type updater struct {
	s              *Store
	ctx            context.Context
	key, etcdKey   string
	dest           runtime.Object
	ignoreNotFound bool
	leaseRetried   bool // a vanished lease was replaced once already
	// decoded is the suggestion when the caller marked it as the store's
	// own decoding of the stored value (opts.SuggestionDecoded).
	decoded runtime.Object
}

func (u *updater) read() (*objState, error) {
	return u.s.readState(u.ctx, u.key, u.etcdKey, u.dest, u.ignoreNotFound, false)
}

// apply checks the preconditions, runs tryUpdate and prepares its result
// for storage. The TTL is nil
// when the current lease (if any) is to be kept.
func (u *updater) apply(st *objState, preconditions *storage.Preconditions, tryUpdate storage.UpdateFunc) (runtime.Object, *uint64, error) {
	if err := preconditions.Check(u.key, st.obj); err != nil {
		return nil, nil, err
	}
	out, ttl, err := tryUpdate(st.obj, st.meta)
	if err != nil {
		return nil, nil, err
	}
	if out == nil {
		return nil, nil, storage.NewInvalidObjError(u.key, "update function returned a nil object")
	}
	if err := u.s.versioner.PrepareObjectForStorage(out); err != nil {
		return nil, nil, storage.NewInvalidObjError(u.key, fmt.Sprintf("preparing object for storage: %v", err))
	}
	return out, ttl, nil
}

// confirmUnchanged settles an update whose result encodes to the bytes of
// a suggestion (st, not read from etcd): it is a no-op if etcd still holds
// exactly the value the update would write, at the suggestion's revision.
// That is one read-only transaction (no raft entry, no new revision) whose
// compare carries the value and whose answer carries only the key's
// revision (a keys-only get, which etcd answers from its index), instead of
// a read that returns the value to be decoded and compared here. etcd
// reads the key once per compare, so the revision is checked here rather
// than compared. A lease is not checked: nothing is written, so whatever
// lease the key has stays (as after a fresh read, the TTL tryUpdate returns
// does not make a no-op a write).
//
// It reports done (destination filled, at the suggestion's revision) when
// value and revision match; otherwise the current state to run the update
// on: from the transaction's Else branch when the value differs (also the
// case for a transformer that does not encrypt deterministically, settled
// on that state as a fresh read would be), or from a read in the rare case
// that the same bytes were written again since the suggestion.
func (u *updater) confirmUnchanged(st *objState, data []byte) (bool, *objState, error) {
	s := u.s
	stored, err := s.toStorage(u.ctx, u.etcdKey, data)
	if err != nil {
		return false, nil, err
	}
	resp, err := s.kv.Txn(u.ctx).
		If(clientv3.Compare(clientv3.Value(u.etcdKey), "=", string(stored))).
		Then(clientv3.OpGet(u.etcdKey, clientv3.WithKeysOnly())).
		Else(clientv3.OpGet(u.etcdKey)).
		Commit()
	if err != nil {
		return false, nil, s.interpret(u.ctx, err, u.key, 0, "update")
	}
	if !resp.Succeeded {
		next, err := s.stateFromTxn(u.ctx, u.key, u.etcdKey, resp, u.dest, u.ignoreNotFound, false)
		return false, next, err
	}
	if kvs := rangeKVs(resp); len(kvs) != 1 || kvs[0].ModRevision != st.rev {
		next, err := u.read()
		return false, next, err
	}
	if u.decoded != nil {
		// etcd holds the value the suggestion was decoded from: a copy of
		// it is that value's decoding.
		if ok, err := s.setObject(u.etcdKey, u.decoded.DeepCopyObject(), u.dest, st.rev); ok {
			return true, nil, err
		}
	}
	return true, nil, s.decodeInto(u.etcdKey, data, u.dest, st.rev)
}

// rangeKVs returns the key-values of a transaction's first operation, a get.
func rangeKVs(resp *clientv3.TxnResponse) []*mvccpb.KeyValue {
	if len(resp.Responses) == 0 || resp.Responses[0].GetResponseRange() == nil {
		return nil
	}
	return resp.Responses[0].GetResponseRange().Kvs
}

// write stores data with a CAS on st.rev. It reports done after a
// successful write (destination filled), or the fresh state on conflict.
//
// etcd attaches a lease to a key only with a put, which moves its mod
// revision, and a lease that ends deletes its keys (a new revision too): so
// the mod revision of a state read from etcd pins its lease, and comparing
// the revision is enough. A suggestion's lease is not known: its write also
// requires the key to have none (what tryUpdate was told). A nil TTL keeps
// the key's lease: with WithIgnoreLease when it has one, which makes etcd
// read the key once more while applying the put; a key known to have none
// is written without a lease, the same outcome without that read.
func (u *updater) write(st *objState, data []byte, ttl *uint64) (bool, *objState, error) {
	s := u.s
	stored, err := s.toStorage(u.ctx, u.etcdKey, data)
	if err != nil {
		return false, nil, err
	}
	var opts []clientv3.OpOption
	var id clientv3.LeaseID
	switch {
	case ttl != nil && *ttl > 0:
		if id, err = s.leases.lease(u.ctx, int64(*ttl)); err != nil {
			return false, nil, s.interpret(u.ctx, err, u.key, 0, "update: granting lease")
		}
		opts = append(opts, clientv3.WithLease(id))
	case ttl == nil && st.lease != 0:
		opts = append(opts, clientv3.WithIgnoreLease())
	}
	cmps := []clientv3.Cmp{clientv3.Compare(clientv3.ModRevision(u.etcdKey), "=", st.rev)}
	if st.suggested {
		cmps = append(cmps, clientv3.Compare(clientv3.LeaseValue(u.etcdKey), "=", 0))
	}
	resp, err := s.kv.Txn(u.ctx).
		If(cmps...).
		Then(clientv3.OpPut(u.etcdKey, string(stored), opts...)).
		Else(clientv3.OpGet(u.etcdKey)).
		Commit()
	if err != nil && id != 0 && errors.Is(err, rpctypes.ErrLeaseNotFound) && !u.leaseRetried {
		// The shared lease vanished (revoked by someone else): retry the
		// same state with a fresh one.
		s.leases.forget(id)
		u.leaseRetried = true
		return false, st, nil
	}
	if err != nil {
		return false, nil, s.interpret(u.ctx, err, u.key, 0, "update")
	}
	if !resp.Succeeded {
		next, err := s.stateFromTxn(u.ctx, u.key, u.etcdKey, resp, u.dest, u.ignoreNotFound, false)
		return false, next, err
	}
	return true, nil, s.decodeInto(u.etcdKey, data, u.dest, resp.Header.Revision)
}
