package gc

import (
	"context"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/listwatch/listwatch/client"
	"github.com/listwatch/listwatch/reflector/controller"
)

// concerned passes the events of a kind's own objects that may give the
// collector work: objects with owners or with the collector's finalizers,
// created (and listed at start), resynced, or changed in their owners,
// finalizers or deletion mark (a status update does not concern it).
func concerned() controller.Predicate[client.Object] {
	return controller.PredicateFuncs[client.Object]{
		CreateFunc: func(e controller.CreateEvent[client.Object]) bool { return collectable(e.Object) },
		UpdateFunc: func(e controller.UpdateEvent[client.Object]) bool {
			o, n := e.ObjectOld, e.ObjectNew
			if !collectable(n) {
				return false
			}
			return o.GetResourceVersion() == n.GetResourceVersion() || // a resync
				!slices.EqualFunc(o.GetOwnerReferences(), n.GetOwnerReferences(), sameRef) ||
				!slices.Equal(o.GetFinalizers(), n.GetFinalizers()) ||
				(o.GetDeletionTimestamp() == nil) != (n.GetDeletionTimestamp() == nil)
		},
		DeleteFunc: func(controller.DeleteEvent[client.Object]) bool { return false },
	}
}

// collectable reports whether obj has owners or one of the collector's
// finalizers.
func collectable(obj client.Object) bool {
	return len(obj.GetOwnerReferences()) > 0 || hasCollectorFinalizer(obj)
}

// hasCollectorFinalizer reports whether obj has the orphan or the
// foregroundDeletion finalizer.
func hasCollectorFinalizer(obj client.Object) bool {
	return slices.ContainsFunc(obj.GetFinalizers(), isCollectorFinalizer)
}

// isCollectorFinalizer reports whether f is the orphan or the
// foregroundDeletion finalizer.
func isCollectorFinalizer(f string) bool {
	return f == metav1.FinalizerOrphanDependents || f == metav1.FinalizerDeleteDependents
}

// sameRef compares two ownerReferences by what the collector reads.
func sameRef(a, b metav1.OwnerReference) bool {
	return a.UID == b.UID && a.Name == b.Name && a.Kind == b.Kind && a.APIVersion == b.APIVersion &&
		(a.BlockOwnerDeletion != nil && *a.BlockOwnerDeletion) == (b.BlockOwnerDeletion != nil && *b.BlockOwnerDeletion)
}

// relatives is the handler, in the controller of n, of the events of
// every kind (n's included): an object deleted, or marked for deletion,
// gives its dependents of n's kind a new answer about their owners; an
// object deleted may be what a foreground deletion of its owner of n's
// kind waits for.
func (g *Collector) relatives(n *node) controller.EventHandler[client.Object] {
	return controller.EventHandlerFuncs[client.Object]{
		UpdateFunc: func(_ context.Context, e controller.UpdateEvent[client.Object], q controller.Queue) {
			if e.ObjectNew.GetDeletionTimestamp() != nil && e.ObjectOld.GetDeletionTimestamp() == nil {
				enqueueDependents(n, e.ObjectNew.GetUID(), q)
			}
		},
		DeleteFunc: func(_ context.Context, e controller.DeleteEvent[client.Object], q controller.Queue) {
			enqueueDependents(n, e.Object.GetUID(), q)
			gk := n.kind.GroupVersionKind.GroupKind()
			for _, r := range e.Object.GetOwnerReferences() {
				if refGroupKind(r) != gk {
					continue
				}
				ns := e.Object.GetNamespace()
				if !n.kind.Namespaced {
					ns = ""
				}
				q.Add(requestFor(ns, r.Name))
			}
		},
	}
}

// enqueueDependents adds the objects of n's kind that refer to uid.
func enqueueDependents(n *node, uid types.UID, q controller.Queue) {
	objs, _ := n.inf.GetIndexer().ByIndex(ownerUIDIndex, string(uid))
	for _, o := range objs {
		q.Add(requestFor(o.GetNamespace(), o.GetName()))
	}
}

// refGroupKind is the group and kind r refers to (any version: one
// object, whichever version the reference was written in).
func refGroupKind(r metav1.OwnerReference) schema.GroupKind {
	gv, err := schema.ParseGroupVersion(r.APIVersion)
	if err != nil {
		return schema.GroupKind{Group: "\x00invalid", Kind: r.Kind} // matches no kind: the owner stays
	}
	return schema.GroupKind{Group: gv.Group, Kind: r.Kind}
}

// requestFor is the Request of ns/name.
func requestFor(ns, name string) controller.Request {
	return controller.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}
}

// cacheKey is the informer key of req.
func cacheKey(req controller.Request) string {
	if req.Namespace == "" {
		return req.Name
	}
	return req.Namespace + "/" + req.Name
}
