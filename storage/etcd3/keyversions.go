package etcd3

import (
	"context"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/listwatch/listwatch/storage"
)

// keyVersionsPage is how many keys one keys-only range of KeyVersions reads.
const keyVersionsPage = 10000

// KeyVersions implements storage.KeyVersionLister with keys-only ranges
// pinned at rev, keyVersionsPage keys at a time: no value is read, decoded
// or transformed.
func (s *Store) KeyVersions(ctx context.Context, prefix string, rev int64, fn func(storage.KeyVersion) error) error {
	etcdPrefix, err := s.prepareRecursiveKey(prefix)
	if err != nil {
		return err
	}
	end := clientv3.GetPrefixRangeEnd(etcdPrefix)
	from := etcdPrefix
	for {
		resp, err := s.kv.Get(ctx, from, clientv3.WithRange(end), clientv3.WithRev(rev),
			clientv3.WithKeysOnly(), clientv3.WithLimit(keyVersionsPage))
		if err != nil {
			return s.interpret(ctx, err, prefix, rev, "list")
		}
		for _, kv := range resp.Kvs {
			if err := fn(storage.KeyVersion{Key: s.userKey(string(kv.Key)), RV: uint64(kv.ModRevision)}); err != nil {
				return err
			}
		}
		if !resp.More || len(resp.Kvs) == 0 {
			return nil
		}
		from = string(resp.Kvs[len(resp.Kvs)-1].Key) + "\x00"
	}
}
