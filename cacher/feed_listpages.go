package cacher

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/cacher/internal/history"
	"github.com/listwatch/listwatch/storage"
)

// The cache is filled from pages of Config.ListPageSize keys, all read at
// the revision of the first (later pages continue with a token pinned to
// it), so that no single etcd response has to hold the whole resource: a
// resource of any size can be cached, and a relist costs etcd one page at
// a time.
//
// A page that meets values the storage cannot decode (the storage answers
// CodeCorruptObj naming them, see storage.Error.CorruptKeys) is read again
// around them: the page's keys come from a keys-only range
// (storage.KeyVersionLister) and the runs of readable keys between the
// corrupt ones are listed one by one. The cache then holds every readable
// object and remembers the corrupt keys (see feed_corrupt.go); without a
// KeyVersionLister the list fails as before.

// errStopKeys ends a KeyVersions walk early.
var errStopKeys = errors.New("cacher: enough keys")

// list reads the whole resource from the storage, page by page, at one
// revision.
func (f *feed) list(ctx context.Context) (*listing, error) {
	l := &listing{distrustGen: f.distrustGen.Load()}
	start := f.prefix
	for {
		items, next, rv, err := f.listPage(ctx, f.resource(), start, l.rv, int64(f.cfg.ListPageSize))
		if keys, _ := corruptKeysOf(err); len(keys) > 0 {
			if l.rv == 0 {
				// The first page failed before telling its revision: pin one.
				cur, err := f.store.GetCurrentResourceVersion(ctx)
				if err != nil {
					return nil, err
				}
				l.rv = cur
			}
			items, next, err = f.listAround(ctx, f.resource(), start, l, keys)
			rv = l.rv
		}
		if err != nil {
			return nil, err
		}
		l.rv = rv
		l.items = append(l.items, items...)
		if next == "" {
			if err := f.leaveOutUncacheable(ctx, l); err != nil {
				return nil, err
			}
			slices.Sort(l.corrupt)
			l.corrupt = slices.Compact(l.corrupt)
			return l, nil
		}
		start = next
	}
}

// corruptKeysOf returns the keys a list's error names as undecodable: its
// CorruptKeys, or the key of a one-key read's CodeCorruptObj.
func corruptKeysOf(err error) ([]string, *storage.Error) {
	var corrupt *storage.Error
	switch {
	case !errors.As(err, &corrupt) || corrupt.Code != storage.CodeCorruptObj:
		return nil, nil
	case len(corrupt.CorruptKeys) > 0:
		return corrupt.CorruptKeys, corrupt
	case corrupt.Key != "":
		return []string{corrupt.Key}, corrupt
	}
	return nil, nil
}

// listPage lists at most limit objects of scope (the whole resource for
// the cache) from key start (scope.Key: the beginning) at revision rv (0:
// the latest, for the first page). It returns the key the next page
// starts at ("" at the end) and the list's revision.
func (f *feed) listPage(ctx context.Context, scope history.Scope, start string, rv uint64, limit int64) ([]runtime.Object, string, uint64, error) {
	opts := storage.ListOptions{Recursive: scope.Recursive, Predicate: storage.Everything}
	opts.Predicate.Limit = limit
	switch {
	case start != scope.Key:
		token, err := storage.EncodeContinue(start, scope.Key, int64(rv))
		if err != nil {
			return nil, "", 0, err
		}
		opts.Predicate.Continue = token
	case rv > 0:
		opts.ResourceVersion, opts.ResourceVersionMatch = storage.RVAt(rv), metav1.ResourceVersionMatchExact
	}
	listObj := f.cfg.NewListFunc()
	if err := f.store.GetList(ctx, scope.Key, opts, listObj); err != nil {
		return nil, "", 0, err
	}
	items, err := meta.ExtractList(listObj)
	if err != nil {
		return nil, "", 0, err
	}
	la, err := meta.ListAccessor(listObj)
	if err != nil {
		return nil, "", 0, err
	}
	got, err := f.cfg.Versioner.ParseResourceVersion(la.GetResourceVersion())
	if err != nil {
		return nil, "", 0, err
	}
	next := ""
	if token := la.GetContinue(); token != "" {
		if next, _, err = storage.DecodeContinue(token, scope.Key); err != nil {
			return nil, "", 0, fmt.Errorf("cacher: the storage's continue token: %w", err)
		}
	}
	return items, next, got, nil
}

// listAround reads the page of scope that starts at key start again, at
// l.rv, leaving out the corrupt keys (which it adds to l.corrupt): the page's
// keys come from a keys-only range, and each run of readable keys is
// listed with a limit of its length. A run that meets further corrupt
// keys (the storage names at most its limit of them at once) is split
// again.
func (f *feed) listAround(ctx context.Context, scope history.Scope, start string, l *listing, corrupt []string) ([]runtime.Object, string, error) {
	lister, ok := f.store.(storage.KeyVersionLister)
	if !ok {
		return nil, "", &storage.Error{Code: storage.CodeCorruptObj, Key: corrupt[0], CorruptKeys: corrupt,
			Msg: "the storage cannot list keys without their values; the cache cannot be filled around corrupt objects"}
	}
	keys := make([]string, 0, f.cfg.ListPageSize+1)
	err := lister.KeyVersions(ctx, scope.Key, int64(l.rv), func(kv storage.KeyVersion) error {
		if kv.Key < start || (!scope.Recursive && kv.Key != scope.Key) {
			return nil
		}
		keys = append(keys, kv.Key)
		if len(keys) > f.cfg.ListPageSize {
			return errStopKeys
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStopKeys) {
		return nil, "", err
	}
	next := ""
	if len(keys) > f.cfg.ListPageSize {
		next, keys = keys[f.cfg.ListPageSize], keys[:f.cfg.ListPageSize]
	}
	bad := map[string]bool{}
	for _, k := range corrupt {
		bad[k] = true
	}
	var items []runtime.Object
	for i := 0; i < len(keys); {
		if bad[keys[i]] {
			i++
			continue
		}
		j := i
		for j < len(keys) && !bad[keys[j]] {
			j++
		}
		run, _, _, err := f.listPage(ctx, scope, keys[i], l.rv, int64(j-i))
		var more *storage.Error
		if errors.As(err, &more) && len(more.CorruptKeys) > 0 {
			added := false
			for _, k := range more.CorruptKeys {
				added = added || !bad[k]
				bad[k] = true
			}
			if added {
				continue // the same run again, split around them
			}
		}
		if err != nil {
			return nil, "", err
		}
		items = append(items, run...)
		i = j
	}
	for _, k := range keys {
		if bad[k] {
			l.corrupt = append(l.corrupt, k)
		}
	}
	f.log.Warn("cacher: the list met objects the storage cannot decode; serving without them",
		"prefix", f.prefix, "scope", scope.Key, "rv", l.rv, "corruptKeys", strings.Join(l.corrupt, ", "))
	return items, next, nil
}

// leaveOutUncacheable removes from l the objects the cache cannot hold and
// adds their storage keys to l.corrupt (see feed_uncacheable.go).
func (f *feed) leaveOutUncacheable(ctx context.Context, l *listing) error {
	var why []string
	badRVs := map[uint64]bool{}
	good := l.items[:0]
	for _, it := range l.items {
		if err := f.uncacheable(it); err != nil {
			rv := f.objectRV(it)
			badRVs[rv] = true
			why = append(why, fmt.Sprintf("an object at resource version %d: %v", rv, err))
			continue
		}
		good = append(good, it)
	}
	if len(why) == 0 {
		return nil
	}
	clear(l.items[len(good):])
	l.items = good
	goodKeys := map[string]bool{}
	for _, it := range good {
		if badRVs[f.objectRV(it)] {
			if k, err := f.cfg.KeyFunc(it); err == nil {
				goodKeys[k] = true
			}
		}
	}
	found, err := f.locateUncacheable(ctx, l.rv, badRVs, goodKeys)
	if err != nil {
		return err
	}
	f.reportUncacheable(found.keys, l.rv, "serving their keys from the storage", "objects", strings.Join(why, "; "))
	l.corrupt = append(l.corrupt, found.keys...)
	return nil
}
