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
// Cases use the Widget type of internal/testapi (or its unstructured form
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
// names, so a store lacking the feature does not pass.
package storagetest
