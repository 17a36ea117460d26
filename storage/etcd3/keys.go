package etcd3

import (
	"fmt"
	"strings"

	"github.com/listwatch/listwatch/storage"
)

// prepareKey validates the key of a single-object operation and returns its
// etcd key. Keys follow Kubernetes' rules and wording: no "." or ".."
// segments ("invalid key"), not "" or "/" ("empty key"), and starting with
// the resource prefix followed by "/" ("lacks resource prefix"), so the bare
// prefix "/widgets" names no object (it would lie outside the resource's
// range "/widgets/").
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
	if strings.ContainsRune(key, 0) {
		return "", storage.NewInvalidArgumentError(fmt.Sprintf("invalid key: %q contains NUL", key), nil)
	}
	for _, seg := range strings.Split(key, "/") {
		if seg == "." || seg == ".." {
			return "", storage.NewInvalidArgumentError(fmt.Sprintf("invalid key: %q", key), nil)
		}
	}
	if key == "" || key == "/" {
		return "", storage.NewInvalidArgumentError(fmt.Sprintf("empty key: %q", key), nil)
	}
	if recursive && !strings.HasSuffix(key, "/") {
		key += "/"
	}
	if rp := s.resourcePrefix; rp != "" && !strings.HasPrefix(key, rp+"/") {
		return "", storage.NewInvalidArgumentError(
			fmt.Sprintf("invalid key: %q lacks resource prefix: %q", key, rp+"/"), nil)
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
