package etcd3

import (
	"fmt"
	"strings"

	"github.com/listwatch/listwatch/storage"
)

// prepareKey validates a key passed to a method and returns its etcd key.
func (s *Store) prepareKey(key string) (string, error) {
	if key == "" || key == "/" {
		return "", storage.NewInvalidArgumentError(fmt.Sprintf("invalid key %q: empty", key), nil)
	}
	if strings.ContainsRune(key, 0) {
		return "", storage.NewInvalidArgumentError(fmt.Sprintf("invalid key %q: contains NUL", key), nil)
	}
	for _, seg := range strings.Split(key, "/") {
		if seg == "." || seg == ".." {
			return "", storage.NewInvalidArgumentError(
				fmt.Sprintf("invalid key %q: \".\" and \"..\" segments are not allowed", key), nil)
		}
	}
	if !strings.HasPrefix(key, "/") {
		key = "/" + key
	}
	if rp := s.resourcePrefix; rp != "" && key != rp && key != rp+"/" && !strings.HasPrefix(key, rp+"/") {
		return "", storage.NewInvalidArgumentError(
			fmt.Sprintf("invalid key %q: not below the resource prefix %q", key, rp), nil)
	}
	return s.pathPrefix + key[1:], nil
}

// prepareRecursiveKey returns the etcd key prefix of a recursive list or
// watch on key: the key with a trailing "/", so that "/a" does not match "/ab".
func (s *Store) prepareRecursiveKey(key string) (string, error) {
	k, err := s.prepareKey(key)
	if err != nil {
		return "", err
	}
	if !strings.HasSuffix(k, "/") {
		k += "/"
	}
	return k, nil
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
