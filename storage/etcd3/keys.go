package etcd3

import (
	"strings"

	"github.com/listwatch/listwatch/storage"
)

// prepareKey validates the key of a single-object operation with
// storage.ValidateKey and returns its etcd key. The bare prefix "/widgets"
// names no object (it would lie outside the resource's range "/widgets/").
func (s *Store) prepareKey(key string) (string, error) {
	return s.validKey(key, false)
}

// prepareRecursiveKey returns the etcd key prefix of a recursive list or
// watch on key: the key with a trailing "/", so that "/a" does not match
// "/ab"; the bare resource prefix is allowed here.
func (s *Store) prepareRecursiveKey(key string) (string, error) {
	return s.validKey(key, true)
}

func (s *Store) validKey(key string, recursive bool) (string, error) {
	if err := storage.ValidateKey(key, s.resourcePrefix, recursive); err != nil {
		return "", err
	}
	if recursive && !strings.HasSuffix(key, "/") {
		key += "/"
	}
	return s.pathPrefix + strings.TrimPrefix(key, "/"), nil
}

// userKey turns an etcd key back into the key callers use.
func (s *Store) userKey(etcdKey string) string {
	return "/" + strings.TrimPrefix(etcdKey, s.pathPrefix)
}

// resourceRangePrefix is the etcd prefix of the whole resource.
func (s *Store) resourceRangePrefix() string {
	if s.resourcePrefix == "" {
		return s.pathPrefix
	}
	return s.pathPrefix + s.resourcePrefix[1:] + "/"
}
