package cacher

import (
	"strings"

	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/watchcache"
)

// recursivePrefix is the key prefix of a recursive list or watch on key:
// with a trailing "/", so that "/a" does not match "/ab".
func recursivePrefix(key string) string {
	if strings.HasSuffix(key, "/") {
		return key
	}
	return key + "/"
}

// listPrefix is the key prefix a list of key covers: key itself unless
// the list is recursive.
func listPrefix(key string, recursive bool) string {
	if recursive {
		return recursivePrefix(key)
	}
	return key
}

// listIndex returns the cache index a list with pred can use, if any.
func listIndex(cfg Config, pred storage.SelectionPredicate) *watchcache.IndexValue {
	for _, f := range cfg.IndexFields {
		if pred.Field != nil {
			if v, ok := pred.Field.RequiresExactMatch(f); ok {
				return &watchcache.IndexValue{Name: watchcache.FieldIndex(f), Value: v}
			}
		}
	}
	for _, l := range cfg.IndexLabels {
		if pred.Label != nil {
			if v, ok := pred.Label.RequiresExactMatch(l); ok {
				return &watchcache.IndexValue{Name: watchcache.LabelIndex(l), Value: v}
			}
		}
	}
	return nil
}
