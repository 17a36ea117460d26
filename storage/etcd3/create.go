package etcd3

import (
	"context"
	"errors"
	"fmt"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/storage"
)

// Create implements storage.Interface. The write is a transaction that only
// succeeds while the key has no mod_revision (does not exist).
func (s *Store) Create(ctx context.Context, key string, obj, out runtime.Object, ttl uint64) error {
	etcdKey, err := s.prepareKey(key)
	if err != nil {
		return err
	}
	if rv, err := s.versioner.ObjectResourceVersion(obj); err != nil {
		return storage.NewInvalidObjError(key, fmt.Sprintf("reading resourceVersion: %v", err))
	} else if rv != 0 {
		return storage.NewInvalidArgumentError("resourceVersion should not be set on objects to be created", nil)
	}
	if err := ctx.Err(); err != nil {
		return ctxError(ctx, "create")
	}
	if err := s.versioner.PrepareObjectForStorage(obj); err != nil {
		return storage.NewInvalidObjError(key, fmt.Sprintf("preparing object for storage: %v", err))
	}
	data, err := s.encode(key, obj)
	if err != nil {
		return err
	}
	stored, err := s.toStorage(ctx, etcdKey, data)
	if err != nil {
		return err
	}
	resp, err := s.createTxn(ctx, key, etcdKey, stored, ttl)
	if err != nil {
		return err
	}
	if !resp.Succeeded {
		return storage.NewKeyExistsError(key, 0)
	}
	if out != nil {
		return s.decodeInto(etcdKey, data, out, resp.Header.Revision)
	}
	return nil
}

// createTxn puts stored at etcdKey if the key does not exist, with a lease
// when ttl > 0. A lease that vanished from etcd is replaced once.
func (s *Store) createTxn(ctx context.Context, key, etcdKey string, stored []byte, ttl uint64) (*clientv3.TxnResponse, error) {
	for attempt := 0; ; attempt++ {
		var opts []clientv3.OpOption
		var id clientv3.LeaseID
		if ttl > 0 {
			var err error
			if id, err = s.leases.lease(ctx, int64(ttl)); err != nil {
				return nil, s.interpret(ctx, err, key, 0, "create: granting lease")
			}
			opts = append(opts, clientv3.WithLease(id))
		}
		resp, err := s.kv.Txn(ctx).
			If(clientv3.Compare(clientv3.ModRevision(etcdKey), "=", 0)).
			Then(clientv3.OpPut(etcdKey, string(stored), opts...)).
			Commit()
		if err != nil && id != 0 && attempt == 0 && errors.Is(err, rpctypes.ErrLeaseNotFound) {
			s.leases.forget(id)
			continue
		}
		if err != nil {
			return nil, s.interpret(ctx, err, key, 0, "create")
		}
		return resp, nil
	}
}
