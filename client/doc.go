// Package client reads and writes API objects by their Go value: the key,
// kind and resource of an object come from a registry of kinds (Kinds),
// not from the caller.
//
// NewKinds registers a scheme's kinds as namespaced; SetClusterScoped marks
// the others (Node, Namespace, ...), whose keys and URLs then have no
// namespace, and for which a namespace given is a Bad Request
// (ErrNamespaceOfClusterScoped).
//
// One interface, Client, has two implementations:
//
//   - NewLocal: in process, over the library's storage (an etcd3 store or
//     a cacher) and the registry's write rules (registry.Store);
//   - NewHTTP: over HTTP, against `cacher-demo serve` or any
//     Kubernetes-compatible API server, through a package transport
//     Transport (a client-side rate limit, and 429s sent again after their
//     Retry-After).
//
// WithCache serves Get and List from informer caches (a manager's cache,
// package cache) for the kinds they watch, and everything else from the
// wrapped client; FromStorage on a read bypasses the cache. Cached reads
// are deep copies; UnsafeDisableDeepCopy hands out the cache's own
// objects, which must then never be modified.
//
// Errors are the library's: *storage.Error (and apimachinery StatusErrors
// for the write rules), tested with IsNotFound, IsAlreadyExists,
// IsConflict, IsInvalid, ... on either implementation alike.
//
// # Use
//
//	var w widget.Widget
//	if err := c.Get(ctx, client.Key("default", "w1"), &w); err != nil {
//		return client.IgnoreNotFound(err)
//	}
//	w.Spec.Replicas = 3
//	err := c.Update(ctx, &w) // 409 Conflict (IsConflict) if w changed meanwhile
//
//	var list widget.WidgetList
//	err = c.List(ctx, &list, client.InNamespace("default"), client.MatchingLabels{"app": "a"})
package client
