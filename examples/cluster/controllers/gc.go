package controllers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/listwatch/listwatch/builder"
	"github.com/listwatch/listwatch/cache"
	"github.com/listwatch/listwatch/client"
	garbage "github.com/listwatch/listwatch/gc"
	"github.com/listwatch/listwatch/reflector/controller"
)

// GarbageCollector deletes objects whose owners are gone (background
// deletion), deletes the dependents of owners deleted in the foreground
// before letting those go, and orphans the dependents of owners deleted
// with orphaning. It knows the example's owner chain: Deployment →
// ReplicaSet → Pod; owners of other kinds (the simulator's DaemonSet)
// are taken as present.
type GarbageCollector struct {
	*base
}

// gcNode is one kind of the chain for the collector.
type gcNode struct {
	// newObj is an empty object of the kind.
	newObj func() client.Object
	// inf is the kind's informer.
	inf *cache.Informer
	// dependents returns the cached objects controlled by uid (nil for
	// pods, which own nothing).
	dependents func(uid string) []client.Object
}

// nodes are the collector's view of the three kinds, by kind name.
func (g *GarbageCollector) nodes() map[string]*gcNode {
	return map[string]*gcNode{
		"Deployment": {newObj: func() client.Object { return &appsv1.Deployment{} }, inf: g.deps,
			dependents: func(uid string) []client.Object { return indexed[client.Object](g.rss, uid) }},
		"ReplicaSet": {newObj: func() client.Object { return &appsv1.ReplicaSet{} }, inf: g.rss,
			dependents: func(uid string) []client.Object { return indexed[client.Object](g.pods, uid) }},
		"Pod": {newObj: func() client.Object { return &corev1.Pod{} }, inf: g.pods},
	}
}

// hasOwners passes objects with ownerReferences or finalizers: the only
// ones the collector acts on.
var hasOwners = controller.NewPredicate(func(o client.Object) bool {
	return len(o.GetOwnerReferences()) > 0 || len(o.GetFinalizers()) > 0
})

// setupGarbageCollector builds one controller per kind on b's manager:
// each reconciles its objects as dependents (are their owners there?) and
// as owners (does a deletion wait for them?), woken by its own events and
// by its owners' and dependents' deletions.
func setupGarbageCollector(b *base) (*GarbageCollector, error) {
	g := &GarbageCollector{base: b}
	nodes := g.nodes()
	opts := controller.Options{MaxConcurrentReconciles: b.cfg.Workers}
	errs := []error{
		builder.ControllerManagedBy(b.cfg.Manager).Named("gc-deployments").
			For(&appsv1.Deployment{}, builder.WithPredicates(hasOwners)).
			Watches(&appsv1.ReplicaSet{}, ownersOnDelete("Deployment")).
			WithOptions(opts).Complete(g.reconciler(nodes["Deployment"], nodes)),
		builder.ControllerManagedBy(b.cfg.Manager).Named("gc-replicasets").
			For(&appsv1.ReplicaSet{}, builder.WithPredicates(hasOwners)).
			Watches(&appsv1.Deployment{}, dependentsOnDelete(nodes["Deployment"])).
			Watches(&corev1.Pod{}, ownersOnDelete("ReplicaSet")).
			WithOptions(opts).Complete(g.reconciler(nodes["ReplicaSet"], nodes)),
		builder.ControllerManagedBy(b.cfg.Manager).Named("gc-pods").
			For(&corev1.Pod{}, builder.WithPredicates(hasOwners, controller.Or(
				controller.NewPredicate(func(o client.Object) bool { return o.GetDeletionTimestamp() != nil }),
				ownerRefsChanged()))).
			Watches(&appsv1.ReplicaSet{}, dependentsOnDelete(nodes["ReplicaSet"])).
			WithOptions(opts).Complete(g.reconciler(nodes["Pod"], nodes)),
	}
	return g, errors.Join(errs...)
}

// ownerRefsChanged passes creations, deletions and the updates that
// change ownerReferences (a pod's status updates do not concern the
// collector).
func ownerRefsChanged() controller.Predicate[client.Object] {
	return controller.PredicateFuncs[client.Object]{
		UpdateFunc: func(e controller.UpdateEvent[client.Object]) bool {
			return !slices.Equal(e.ObjectOld.GetOwnerReferences(), e.ObjectNew.GetOwnerReferences())
		},
	}
}

// ownersOnDelete enqueues the owner (of kind) of a deleted dependent: a
// foreground deletion may be waiting for it.
func ownersOnDelete(kind string) builder.EventHandler {
	return controller.EventHandlerFuncs[client.Object]{
		DeleteFunc: func(_ context.Context, e controller.DeleteEvent[client.Object], q controller.Queue) {
			for _, r := range e.Object.GetOwnerReferences() {
				if r.Kind == kind {
					q.Add(requestFor(e.Object.GetNamespace(), r.Name))
				}
			}
		},
	}
}

// dependentsOnDelete enqueues the dependents of an owner deleted, or
// marked for deletion: their owner check has a new answer.
func dependentsOnDelete(owner *gcNode) builder.EventHandler {
	enqueue := func(obj client.Object, q controller.Queue) {
		for _, d := range owner.dependents(string(obj.GetUID())) {
			q.Add(requestFor(d.GetNamespace(), d.GetName()))
		}
	}
	return controller.EventHandlerFuncs[client.Object]{
		UpdateFunc: func(_ context.Context, e controller.UpdateEvent[client.Object], q controller.Queue) {
			if e.ObjectNew.GetDeletionTimestamp() != nil && e.ObjectOld.GetDeletionTimestamp() == nil {
				enqueue(e.ObjectNew, q)
			}
		},
		DeleteFunc: func(_ context.Context, e controller.DeleteEvent[client.Object], q controller.Queue) {
			enqueue(e.Object, q)
		},
	}
}

// reconciler is the collector's Reconcile for the kind n.
func (g *GarbageCollector) reconciler(n *gcNode, nodes map[string]*gcNode) controller.Reconciler {
	return controller.ReconcileFunc(func(ctx context.Context, req controller.Request) (controller.Result, error) {
		cached, ok := n.inf.GetIndexer().GetByKey(req.String())
		if !ok {
			return controller.Result{}, nil
		}
		if cached.GetDeletionTimestamp() != nil {
			err := g.finishOwner(ctx, n, cached)
			if errors.Is(err, errDependentsChanged) {
				// Orphaning races the dependents' own writers; their
				// events do not wake this owner, so look again.
				return controller.Result{Requeue: true}, nil
			}
			return controller.Result{}, err
		}
		return controller.Result{}, g.checkOwners(ctx, cached, nodes)
	})
}

// ownerState looks up ref (in namespace ns): from the cache when it has
// the owner with the reference's UID, else live, from the server (the
// cache may not have seen an owner created a moment ago).
func (g *GarbageCollector) ownerState(ctx context.Context, ns string, ref metav1.OwnerReference, nodes map[string]*gcNode) (garbage.OwnerState, error) {
	n, ok := nodes[ref.Kind]
	if !ok || (ref.APIVersion != "apps/v1" && ref.APIVersion != "v1") {
		return garbage.OwnerPresent, nil // not a kind the example serves: never collected
	}
	state := func(o metav1.Object) garbage.OwnerState {
		switch {
		case o.GetUID() != ref.UID:
			return garbage.OwnerAbsent
		case o.GetDeletionTimestamp() != nil && slices.Contains(o.GetFinalizers(), metav1.FinalizerDeleteDependents):
			return garbage.OwnerDeletingForeground
		}
		return garbage.OwnerPresent
	}
	if o, ok := n.inf.GetIndexer().GetByKey(ns + "/" + ref.Name); ok && o.GetUID() == ref.UID {
		return state(o), nil
	}
	live := n.newObj()
	err := g.c.Get(ctx, client.Key(ns, ref.Name), live, client.FromStorage)
	switch {
	case client.IsNotFound(err):
		return garbage.OwnerAbsent, nil
	case err != nil:
		return 0, err
	}
	return state(live), nil
}

// checkOwners deletes obj when its owners are gone, or drops the
// references of the gone ones when another owner remains.
func (g *GarbageCollector) checkOwners(ctx context.Context, obj client.Object, nodes map[string]*gcNode) error {
	refs := obj.GetOwnerReferences()
	if len(refs) == 0 {
		return nil
	}
	states := map[types.UID]garbage.OwnerState{}
	for _, r := range refs {
		s, err := g.ownerState(ctx, obj.GetNamespace(), r, nodes)
		if err != nil {
			return err
		}
		states[r.UID] = s
	}
	d := garbage.Decide(refs, func(r metav1.OwnerReference) garbage.OwnerState { return states[r.UID] })
	switch {
	case d.Delete:
		g.log.Debug("garbage collecting", "namespace", obj.GetNamespace(), "name", obj.GetName(), "propagation", d.Propagation)
		policy := d.Propagation
		if policy == metav1.DeletePropagationBackground {
			// No policy is the server's default, Background, but keeps
			// the orphan or foregroundDeletion finalizer of a dependent
			// someone deletes meanwhile (the cache may not show it yet),
			// where Background would remove it.
			policy = ""
		}
		err := g.deleteExactly(ctx, obj, policy)
		if client.IsNotFound(err) {
			return nil
		}
		return settled(err)
	case len(d.RemoveRefs) > 0:
		keep := slices.DeleteFunc(slices.Clone(refs), func(r metav1.OwnerReference) bool { return slices.Contains(d.RemoveRefs, r.UID) })
		return settled(g.setOwnerRefs(ctx, obj, keep))
	}
	return nil
}

// errDependentsChanged says a dependent changed while the owner was being
// removed from it.
var errDependentsChanged = errors.New("a dependent changed while being orphaned")

// finishOwner serves an owner being deleted: with the orphan finalizer it
// removes itself from its dependents, with foregroundDeletion it deletes
// them; once that is done it removes the finalizer, and the server
// deletes the owner with its last finalizer.
func (g *GarbageCollector) finishOwner(ctx context.Context, n *gcNode, obj client.Object) error {
	fins := obj.GetFinalizers()
	orphan, fg := slices.Contains(fins, metav1.FinalizerOrphanDependents), slices.Contains(fins, metav1.FinalizerDeleteDependents)
	if !orphan && !fg {
		return nil
	}
	var deps []client.Object
	if n.dependents != nil {
		deps = n.dependents(string(obj.GetUID()))
	}
	var errs []error
	blocking, changed := 0, false
	for _, dep := range deps {
		if !garbage.RefersTo(dep.GetOwnerReferences(), obj.GetUID()) {
			continue
		}
		if orphan {
			refs := slices.DeleteFunc(slices.Clone(dep.GetOwnerReferences()), func(r metav1.OwnerReference) bool { return r.UID == obj.GetUID() })
			switch err := g.setOwnerRefs(ctx, dep, refs); {
			case client.IsConflict(err):
				changed = true
			case err != nil && !client.IsNotFound(err):
				errs = append(errs, err)
			}
			continue
		}
		if garbage.Blocking(dep.GetOwnerReferences(), obj.GetUID()) {
			blocking++
		}
		if dep.GetDeletionTimestamp() != nil {
			continue
		}
		if err := g.deleteExactly(ctx, dep, metav1.DeletePropagationForeground); err != nil && !client.IsNotFound(err) {
			errs = append(errs, settled(err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if changed {
		return errDependentsChanged
	}
	if fg && blocking > 0 {
		return nil // their deletion events bring the owner back here
	}
	return g.removeFinalizers(ctx, obj)
}

// removeFinalizers removes the orphan and foregroundDeletion finalizers
// from obj (with its resourceVersion as a precondition).
func (g *GarbageCollector) removeFinalizers(ctx context.Context, obj client.Object) error {
	keep := slices.DeleteFunc(slices.Clone(obj.GetFinalizers()), func(f string) bool {
		return f == metav1.FinalizerOrphanDependents || f == metav1.FinalizerDeleteDependents
	})
	if keep == nil {
		keep = []string{}
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": obj.GetResourceVersion(), "finalizers": keep}})
	if err != nil {
		return err
	}
	err = g.c.Patch(ctx, obj.DeepCopyObject().(client.Object), client.RawPatch(types.MergePatchType, patch))
	if client.IsNotFound(err) {
		return nil
	}
	if err = settled(err); err != nil {
		return fmt.Errorf("removing finalizers of %s/%s: %w", obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}
