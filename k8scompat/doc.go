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
// The registry gets its storage.Interface from RESTOptions.Decorator.
// StorageDecorator is that decorator: for each resource it builds
// listwatch's etcd store, puts listwatch's cacher in front of it (unless
// DecoratorConfig.Cache says otherwise) and hands the registry the adapter;
// the destroy function it returns stops all of it.
//
//	opts := generic.RESTOptions{
//		StorageConfig: storageConfig.ForResource(gr), // codec, prefix, transformer
//		Decorator:     k8scompat.StorageDecorator(k8scompat.DecoratorConfig{Client: cli}),
//		ResourcePrefix: "/" + gr.Group + "/" + gr.Resource,
//	}
//
// Everything but the etcd client has a default that gives the registry what
// Kubernetes' own storage gives it: every resource cached; no
// transformer configured means values stored as given; corrupt objects
// handled as Kubernetes' AllowUnsafeMalformedObjectDeletion feature gate
// says (read from utilfeature.DefaultFeatureGate when the storage is built):
// with it on, lists read past values that cannot be decoded or whose
// transformer error Kubernetes classifies as a corrupt object, and name them
// all in their error (such objects can be deleted with
// ignoreStoreReadErrorWithClusterBreakingPotential), while any other
// transformer error ends the list with an internal error (see
// KubernetesTransformer); with it off, a list ends at its first unreadable
// value. Watches served to API clients over the cacher get each event's
// object as a *storage.EncodedObject, a runtime.CacheableObject whose
// encodings all watchers of the change share, so that the apiserver encodes
// an event once per format, not once per watcher; the watch is the
// cacher's own, with no goroutine of the adapter's per watch
// (Config.ShareWatchEncodings).
//
// Encryption at rest: the storage config's transformer is called for every
// read and write. Kubernetes' dynamic encryption-config reload swaps the
// keys inside that transformer without telling the storage, which is all
// listwatch needs: writes use the new write key from then on, values
// written with an older key still read while the config keeps that key (the
// read reports them stale, and the next update of the object rewrites them
// with the new key), and the cacher keeps serving the objects it holds
// decoded. A value whose key the config no longer has fails its next read
// from etcd with an internal error, as in Kubernetes' etcd3 store (a
// corrupt object when the transformer is wrapped as Kubernetes' storage
// factory wraps it, see StorageDecorator). (*Store).SetTransformer replaces the
// transformer outright and makes the cacher revalidate what it holds.
//
// Use New(Config{Storage: store}) instead to serve any listwatch store, or
// put Kubernetes' own cacher (cacher.NewCacherFromConfig) over the adapter:
// the adapter is a complete storage.Interface either way.
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
//   - Watch events, bookmarks and final error events pass through unchanged:
//     the watch is the listwatch store's own (for an API client over the
//     cacher, its WatchEncoded, see Config.ShareWatchEncodings).
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
//   - A Store made with New reports the CompactRevision of its listwatch
//     store when it has a CompactRevision() int64 method (the etcd store
//     does, and observes compactions made by any client), else 0 unless
//     Config.CompactRevision is given. StorageDecorator passes the etcd
//     store's.
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
