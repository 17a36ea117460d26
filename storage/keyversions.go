package storage

import "context"

// KeyVersion is a key and the resource version of the object stored at it
// (the etcd mod revision of its value).
type KeyVersion struct {
	Key string
	RV  uint64
}

// KeyVersionLister is implemented by storages that can list the keys under
// a prefix with their objects' resource versions at a past revision without
// reading or decoding the values (etcd: a keys-only range). A cache
// compares it with its own state at the same revision to find divergence
// cheaply (see the cacher's consistency check).
type KeyVersionLister interface {
	// KeyVersions calls fn, in key order, for every key below prefix (which
	// ends in "/") at revision rev. It stops at fn's first error and
	// returns it. A compacted rev is a CodeGone error.
	KeyVersions(ctx context.Context, prefix string, rev int64, fn func(KeyVersion) error) error
}
