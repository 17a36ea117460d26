// Package k8scompat serves listwatch storage through Kubernetes' own storage
// interface, k8s.io/apiserver/pkg/storage.Interface, so that a server built
// on k8s.io/apiserver's generic registry (registry.Store) can keep its
// objects in listwatch's etcd store and serve lists and watches from
// listwatch's cacher.
//
// It is a separate Go module (github.com/listwatch/listwatch/k8scompat,
// pinned to k8s.io/apiserver v0.37.2) so that the listwatch library itself
// never depends on k8s.io/apiserver.
//
// # Using it from a generic registry
//
// The registry gets its storage.Interface from RESTOptions.Decorator. A
// decorator that builds listwatch's etcd store, puts listwatch's cacher in
// front of it and hands the registry the adapter:
//
//	func ListwatchDecorator(cli *clientv3.Client) generic.StorageDecorator {
//		return func(cfg *storagebackend.ConfigForResource, resourcePrefix string,
//			keyFunc func(runtime.Object) (string, error), newFunc, newListFunc func() runtime.Object,
//			getAttrs storage.AttrFunc, _ storage.IndexerFuncs, _ *cache.Indexers,
//		) (storage.Interface, factory.DestroyFunc, error) {
//			store, err := etcd3.New(etcd3.Config{
//				Client:         cli,
//				Codec:          cfg.Codec,
//				NewFunc:        newFunc,
//				NewListFunc:    newListFunc,
//				Prefix:         cfg.Prefix,                              // e.g. "/registry"
//				ResourcePrefix: resourcePrefix,                          // e.g. "/widgets"
//				Transformer:    k8scompat.Transformer(cfg.Transformer), // encryption at rest, if configured
//			})
//			if err != nil {
//				return nil, nil, err
//			}
//			c, err := cacher.New(cacher.Config{
//				Storage: store, ResourcePrefix: resourcePrefix, KeyFunc: keyFunc,
//				NewFunc: newFunc, NewListFunc: newListFunc,
//				GetAttrs: lwstorage.AttrFunc(getAttrs),
//			})
//			if err != nil {
//				return nil, nil, err
//			}
//			ctx, cancel := context.WithCancel(context.Background())
//			done := make(chan struct{})
//			go func() { defer close(done); _ = c.Run(ctx) }()
//			s, err := k8scompat.New(k8scompat.Config{Storage: c})
//			if err != nil {
//				cancel()
//				return nil, nil, err
//			}
//			return s, func() { cancel(); <-done; store.Close() }, nil
//		}
//	}
//
// Use Config{Storage: store} instead to serve straight from etcd, or put
// Kubernetes' own cacher (cacher.NewCacherFromConfig) over the adapter: the
// adapter is a complete storage.Interface either way.
//
// # What the adapter translates
//
//   - Options and predicates are copied field by field (label and field
//     selectors, GetAttrs, IndexLabels/IndexFields, Limit, Continue,
//     AllowWatchBookmarks, ResourceVersion and ResourceVersionMatch,
//     Recursive, SendInitialEvents, ProgressNotify), preconditions likewise;
//     UpdateFunc and ValidateObjectFunc are wrapped (ResponseMeta converted),
//     and the errors they return come back unchanged.
//   - Errors: listwatch's typed *storage.Error values become what Kubernetes'
//     storage returns (*storage.StorageError codes, storage.InternalError,
//     apierrors statuses), see ToK8sError; FromK8sError goes the other way.
//   - Watch events, bookmarks and final error events pass through unchanged.
//   - Differences in convention between the two contracts, each documented
//     where it is handled: precondition failures (listwatch Conflict,
//     Kubernetes InvalidObj); ProgressNotify (Kubernetes does not require
//     AllowWatchBookmarks for it, listwatch does); a watch on a cancelled
//     context (Kubernetes: a closed watch, not an error);
//     DeleteOptions.ExpectTransformOrDecodeError (checked by the adapter,
//     then listwatch's IgnoreStoreReadError); the API priority and fairness
//     watch-initialized signal (fired once Watch returns).
//
// # Not supported
//
//   - CompactRevision reports 0 unless Config.CompactRevision is given (or the
//     listwatch store has a CompactRevision() int64 method): listwatch stores
//     do not observe etcd compactions made elsewhere.
//   - EnableResourceSizeEstimation is accepted but produces no estimate, so
//     Stats.EstimatedAverageObjectSizeBytes is always 0 ("unknown").
//   - ListOptions.RecordTimestamps is ignored (objects are never wrapped), and
//     a non-empty shard selector with the ShardedListAndWatch feature on is
//     refused with 400 rather than ignored.
//
// How far listwatch meets the contract is measured by running Kubernetes'
// own conformance suite through this adapter: see the conformance package,
// and the bench package for Kubernetes' own benchmarks side by side.
package k8scompat
