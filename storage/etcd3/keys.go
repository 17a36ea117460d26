package etcd3

import (
	"fmt"
	"strings"

	"github.com/listwatch/listwatch/storage"
)

// prepareKey validates the key of a single-object operation and returns its
// etcd key. The key must lie strictly below the resource prefix: the prefix
// itself names the resource, not an object, and an object stored there would
// be outside every list, watch and count of the resource. Error messages use
// Kubernetes' wording ("empty key", "invalid key", "lacks resource prefix").
func (s *Store) prepareKey(key string) (string, error) {
	return s.validKey(key, false)
}

// prepareRecursiveKey returns the etcd key prefix of a recursive list or
// watch on key (which may be the resource prefix itself): the key with a
// trailing "/", so that "/a" does not match "/ab".
func (s *Store) prepareRecursiveKey(key string) (string, error) {
	k, err := s.validKey(key, true)
	if err != nil {
		return "", err
	}
	if !strings.HasSuffix(k, "/") {
		k += "/"
	}
	return k, nil
}

func (s *Store) validKey(key string, recursive bool) (string, error) {
	if key == "" || key == "/" {
		return "", storage.NewInvalidArgumentError(fmt.Sprintf("empty key: %q", key), nil)
	}
	if strings.ContainsRune(key, 0) {
		return "", storage.NewInvalidArgumentError(fmt.Sprintf("invalid key: %q contains NUL", key), nil)
	}
	for _, seg := range strings.Split(key, "/") {
		if seg == "." || seg == ".." {
			return "", storage.NewInvalidArgumentError(
				fmt.Sprintf("invalid key: %q (\".\" and \"..\" segments are not allowed)", key), nil)
		}
	}
	if !strings.HasPrefix(key, "/") {
		key = "/" + key
	}
	if rp := s.resourcePrefix; rp != "" {
		below := strings.HasPrefix(key, rp+"/") && len(key) > len(rp)+1
		atPrefix := key == rp || key == rp+"/"
		if !below && !(recursive && atPrefix) {
			return "", storage.NewInvalidArgumentError(
				fmt.Sprintf("invalid key: %q lacks resource prefix %q", key, rp+"/"), nil)
		}
	}
	return s.pathPrefix + key[1:], nil
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
