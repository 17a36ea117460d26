package etcd3

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/storage"
)

// Get implements storage.Interface. Every Get is a linearizable read, so
// it satisfies any resource version; an RV newer than etcd's current
// revision is storage.ErrTooLargeResourceVersion (at once: etcd's state is
// the newest there is; see storage.CheckReachable for an RV above any
// revision).
func (s *Store) Get(ctx context.Context, key string, opts storage.GetOptions, objPtr runtime.Object) error {
	etcdKey, err := s.prepareKey(key)
	if err != nil {
		return err
	}
	if err := storage.CheckReachable(ctx, opts.ResourceVersion, s.GetCurrentResourceVersion); err != nil {
		return err
	}
	minRV := opts.ResourceVersion.Revision()
	if err := ctx.Err(); err != nil {
		return ctxError(ctx, "get")
	}
	resp, err := s.kv.Get(ctx, etcdKey)
	if err != nil {
		return s.interpret(ctx, err, key, 0, "get")
	}
	if err := checkMinimumRV(minRV, resp.Header.Revision); err != nil {
		return err
	}
	if len(resp.Kvs) == 0 {
		if opts.IgnoreNotFound {
			if err := runtime.SetZeroValue(objPtr); err != nil {
				return fmt.Errorf("etcd3: zeroing %T: %w", objPtr, err)
			}
			return nil
		}
		return storage.NewNotFoundError(key, 0)
	}
	kv := resp.Kvs[0]
	data, _, err := s.fromStorage(ctx, etcdKey, kv.Value)
	if err != nil {
		return err
	}
	return s.decodeInto(etcdKey, data, objPtr, kv.ModRevision)
}

// checkMinimumRV fails with a too-large-RV error when the state read at
// revision current is older than the requested minimum.
func checkMinimumRV(minRV uint64, current int64) error {
	if minRV > 0 && minRV > uint64(current) {
		return storage.NewTooLargeResourceVersionError(minRV, uint64(current), 1)
	}
	return nil
}
