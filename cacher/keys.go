package cacher

import (
	"fmt"
	"strings"

	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/watchcache"
)

// checkKey rejects keys outside the resource prefix and keys with "." or
// ".." segments, as the etcd3 store does.
func (c *Cacher) checkKey(key string) error {
	if key == "" || key == "/" || strings.ContainsRune(key, 0) {
		return storage.NewInvalidArgumentError(fmt.Sprintf("invalid key %q", key), nil)
	}
	for _, seg := range strings.Split(key, "/") {
		if seg == "." || seg == ".." {
			return storage.NewInvalidArgumentError(fmt.Sprintf("invalid key %q: \".\" and \"..\" segments are not allowed", key), nil)
		}
	}
	rp := c.cfg.ResourcePrefix
	if key != rp && !strings.HasPrefix(key, rp+"/") {
		return storage.NewInvalidArgumentError(fmt.Sprintf("invalid key %q: not below the resource prefix %q", key, rp), nil)
	}
	return nil
}

// recursivePrefix is the key prefix of a recursive list or watch on key:
// with a trailing "/", so that "/a" does not match "/ab".
func recursivePrefix(key string) string {
	if strings.HasSuffix(key, "/") {
		return key
	}
	return key + "/"
}

// listIndex returns the cache index a list with pred can use, if any.
func (c *Cacher) listIndex(pred storage.SelectionPredicate) *watchcache.IndexValue {
	for _, f := range c.cfg.IndexFields {
		if pred.Field != nil {
			if v, ok := pred.Field.RequiresExactMatch(f); ok {
				return &watchcache.IndexValue{Name: watchcache.FieldIndex(f), Value: v}
			}
		}
	}
	for _, l := range c.cfg.IndexLabels {
		if pred.Label != nil {
			if v, ok := pred.Label.RequiresExactMatch(l); ok {
				return &watchcache.IndexValue{Name: watchcache.LabelIndex(l), Value: v}
			}
		}
	}
	return nil
}
