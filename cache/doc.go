// Package cache holds the informer caches a manager reads from: one shared
// informer per kind, made on first use and run by the manager, and a
// client.Reader (Get, List) over them for client.WithCache.
//
// Informers are made here, through one reflector.InformerFactory: a
// builder's For, Owns and Watches and a user's InformerFor share the
// informer of a kind, so each kind is listed and watched once.
//
//	inf, err := mgr.GetCache().InformerFor(&widget.Widget{})
//	var w widget.Widget
//	err = mgr.GetCache().Get(ctx, client.Key("default", "w1"), &w)
//
// Objects read from the cache are copies: changing them changes nothing
// in the cache. client.UnsafeDisableDeepCopy hands out the cache's own
// objects instead, which the caller must never modify.
//
// Code written against typed informers shares the cache's informer of a
// kind through InformerOf, a reflector.SharedInformer[T] view of it:
//
//	nodes, err := cache.InformerOf[*corev1.Node](mgr.GetCache())
//
// WaitFresh waits until every informer holds every write made before the
// call (each resource's current revision, read with a consistent list,
// applied to its store): what a manager does between winning an election
// and starting its controllers.
package cache
