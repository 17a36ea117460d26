// Package conformance runs Kubernetes' own storage conformance suite,
// k8s.io/apiserver/pkg/storage/testing (the exported Run* functions of
// store_tests.go and watcher_tests.go, unmodified), against listwatch's etcd
// store and listwatch's cacher, each seen through the k8scompat adapter, on
// an embedded etcd.
//
// The package has no non-test code: run it with
//
//	go test -race ./conformance
//
// Every upstream function is listed in suite_test.go with, per backend,
// either nothing (it runs) or a one-line reason why it cannot run (it needs
// a hook only Kubernetes' own implementations have, or is not applicable to
// a cache). Failures that are listwatch bugs or divergences are skipped with
// knownFailure(anchor) until fixed in the library (../README.md lists and
// explains them); K8SCOMPAT_RUN_KNOWN_FAILURES=1 runs them anyway.
package conformance
