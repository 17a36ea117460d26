// Package storagetest is the conformance suite of storage.Interface: one set
// of named cases that every implementation (the etcd3 store, the cacher) runs
// unchanged against a real embedded etcd.
//
// An implementation's test supplies a factory that builds a fresh, empty
// store for each case, on its own key prefix of one shared etcd:
//
//	func TestConformance(t *testing.T) {
//		storagetest.RunAll(t, func(t *testing.T) *storagetest.Env {
//			s := newStoreOnPrefix(t, embedtest.Prefix(t))
//			return &storagetest.Env{Store: s, ResourcePrefix: "/widgets", ...}
//		})
//	}
//
// Cases use the Widget type of examples/widget (or its unstructured form
// when Env.Unstructured is set) under keys ResourcePrefix/<namespace>/<name>.
//
// The cases are written so that a correct cache passes them as well as the
// store that reads etcd directly: a read with resource version "0" may see
// older state, so a case that must observe its own writes reads with "" or
// with the written RV and match NotOlderThan; watches from "0" are checked
// for eventually reporting every object exactly once. Waits are bounded
// polls or channel receives with a deadline; a short absence window is used
// only where the contract requires that nothing happens.
//
// Every case can fail: each checks an observable effect of the feature it
// names, so a store lacking the feature does not pass. mutants_test.go
// checks this for a sample: it wraps the etcd3 store in mutants that each
// remove one feature (TTL, Exact lists, limits, selectors, preconditions,
// bookmarks, initial events, ...) and requires the cases that cover the
// feature to fail against them.
//
// Case groups (see Cases for the names): Create, Get, List (recursion,
// prefixes, every RV mode, selectors), paging (limit, continue, pinned RV,
// compaction, filtered pages), GuaranteedUpdate (conflicts, cached objects,
// preconditions, no-op writes, TTL), Delete, raw-etcd cases (corrupt values,
// objects etcd refuses), stats and current RV, bad input (malformed RVs and
// keys: typed ErrInvalidArgument, nothing written), and Watch (every start
// RV, initial events and their end bookmark, selector transitions,
// progress bookmarks, cancellation, 410 after compaction, ordering).
//
// Each case starts by checking that the store's etcd prefix is empty. Waits
// are bounded by 15 s, or by the duration in the environment variable named
// by WaitTimeoutEnv.
package storagetest
