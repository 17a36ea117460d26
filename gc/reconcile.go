package gc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/listwatch/listwatch/client"
	"github.com/listwatch/listwatch/reflector/controller"
)

// errChanged says an object changed between the cache's copy the
// collector read and its write: the Request is tried again (with
// backoff) on the fresher copy.
var errChanged = errors.New("gc: the object changed meanwhile")

// reconciler is the collector's Reconcile for the objects of n's kind:
// an object being deleted with one of the collector's finalizers is an
// owner to finish; any other object with owners is a dependent to check.
func (g *Collector) reconciler(n *node) controller.Reconciler {
	return controller.ReconcileFunc(func(ctx context.Context, req controller.Request) (controller.Result, error) {
		obj, ok := n.inf.GetIndexer().GetByKey(cacheKey(req))
		if !ok {
			return controller.Result{}, nil
		}
		var err error
		if obj.GetDeletionTimestamp() != nil {
			err = g.finishOwner(ctx, obj)
		} else {
			err = g.checkOwners(ctx, obj)
		}
		switch {
		case errors.Is(err, errChanged):
			return controller.Result{Requeue: true}, nil
		case err != nil && ctx.Err() != nil:
			return controller.Result{}, nil // stopping: the next start lists every object again
		}
		return controller.Result{}, err
	})
}

// ownerState says what became of the owner ref of a dependent in
// namespace ns: from the cache when it holds the owner with the
// reference's UID, else live (the cache may not have seen an owner
// created a moment ago). An owner of a kind the collector does not serve
// is present.
func (g *Collector) ownerState(ctx context.Context, ns string, ref metav1.OwnerReference) (OwnerState, error) {
	n := g.nodeFor(refGroupKind(ref))
	if n == nil {
		return OwnerPresent, nil
	}
	switch {
	case !n.kind.Namespaced:
		ns = ""
	case ns == "":
		// A cluster-scoped dependent cannot have a namespaced owner: the
		// reference resolves to nothing, as in Kubernetes.
		return OwnerAbsent, nil
	}
	state := func(o client.Object) OwnerState {
		switch {
		case o.GetUID() != ref.UID:
			return OwnerAbsent
		case o.GetDeletionTimestamp() != nil && slices.Contains(o.GetFinalizers(), metav1.FinalizerDeleteDependents):
			return OwnerDeletingForeground
		}
		return OwnerPresent
	}
	if o, ok := n.inf.GetIndexer().GetByKey(cacheKey(requestFor(ns, ref.Name))); ok && o.GetUID() == ref.UID {
		return state(o), nil
	}
	live := newObject(n.kind)
	err := g.c.Get(ctx, client.Key(ns, ref.Name), live, client.FromStorage)
	switch {
	case client.IsNotFound(err):
		return OwnerAbsent, nil
	case err != nil:
		return 0, fmt.Errorf("looking up owner %s %q: %w", ref.Kind, ref.Name, err)
	}
	return state(live), nil
}

// checkOwners deletes the dependent obj when its owners are gone, or
// drops the references of the gone ones when another owner remains.
func (g *Collector) checkOwners(ctx context.Context, obj client.Object) error {
	refs := obj.GetOwnerReferences()
	if len(refs) == 0 {
		return nil
	}
	states := map[types.UID]OwnerState{}
	for _, r := range refs {
		s, err := g.ownerState(ctx, obj.GetNamespace(), r)
		if err != nil {
			return err
		}
		states[r.UID] = s
	}
	d := Decide(refs, func(r metav1.OwnerReference) OwnerState { return states[r.UID] })
	switch {
	case d.Delete:
		g.log.Info("deleting a dependent whose owners are gone", "kind", kindOf(obj), "namespace", obj.GetNamespace(),
			"name", obj.GetName(), "propagation", d.Propagation)
		policy := d.Propagation
		if policy == metav1.DeletePropagationBackground {
			// No policy is the default, Background, but keeps an orphan
			// or foregroundDeletion finalizer someone put on the
			// dependent meanwhile (the cache may not show it yet), where
			// Background would remove it.
			policy = ""
		}
		return g.deleteExactly(ctx, obj, policy)
	case len(d.RemoveRefs) > 0:
		keep := slices.DeleteFunc(slices.Clone(refs), func(r metav1.OwnerReference) bool { return slices.Contains(d.RemoveRefs, r.UID) })
		g.log.Info("removing references to gone owners", "kind", kindOf(obj), "namespace", obj.GetNamespace(),
			"name", obj.GetName(), "removed", len(d.RemoveRefs))
		return g.setOwnerRefs(ctx, obj, keep)
	}
	return nil
}

// finishOwner serves an owner being deleted: with the orphan finalizer it
// removes its references from its dependents, with foregroundDeletion it
// deletes them (in the foreground) and waits for those that block it;
// then it removes the finalizer, and the registry deletes the owner with
// its last finalizer. It acts on the dependents its cache holds, and,
// before removing the finalizer, on those storage holds: the informer of
// a dependent's kind may not have seen yet a dependent created before the
// owner was marked, which an orphaned owner must not leave to be
// collected, and a foreground owner must not go before.
func (g *Collector) finishOwner(ctx context.Context, obj client.Object) error {
	fins := obj.GetFinalizers()
	orphan, fg := slices.Contains(fins, metav1.FinalizerOrphanDependents), slices.Contains(fins, metav1.FinalizerDeleteDependents)
	if !orphan && !fg {
		return nil
	}
	blocking, err := g.serveDependents(ctx, obj, orphan, g.dependents(string(obj.GetUID())))
	if err != nil || blocking > 0 {
		return err // blocking: their deletion events bring the owner back here
	}
	live, err := g.liveDependents(ctx, obj)
	if err != nil {
		return err
	}
	if blocking, err = g.serveDependents(ctx, obj, orphan, live); err != nil || blocking > 0 {
		return err
	}
	g.log.Info("finishing the deletion of an owner", "kind", kindOf(obj), "namespace", obj.GetNamespace(),
		"name", obj.GetName(), "orphaned", orphan)
	return g.removeFinalizers(ctx, obj)
}

// serveDependents removes owner's references from deps (orphan), or
// deletes those not yet marked in the foreground and returns how many
// block owner's deletion.
func (g *Collector) serveDependents(ctx context.Context, owner client.Object, orphan bool, deps []client.Object) (int, error) {
	uid := owner.GetUID()
	var errs []error
	blocking := 0
	for _, dep := range deps {
		if !RefersTo(dep.GetOwnerReferences(), uid) {
			continue
		}
		if orphan {
			refs := slices.DeleteFunc(slices.Clone(dep.GetOwnerReferences()), func(r metav1.OwnerReference) bool { return r.UID == uid })
			if err := g.setOwnerRefs(ctx, dep, refs); err != nil {
				errs = append(errs, err)
			}
			continue
		}
		if Blocking(dep.GetOwnerReferences(), uid) {
			blocking++
		}
		if dep.GetDeletionTimestamp() != nil {
			continue
		}
		if err := g.deleteExactly(ctx, dep, metav1.DeletePropagationForeground); err != nil {
			errs = append(errs, err)
		}
	}
	return blocking, errors.Join(errs...)
}

// liveDependents lists, from storage, the objects of every kind the
// collector serves that may depend on owner (in its namespace, or
// anywhere for a cluster-scoped owner) and refer to its UID.
func (g *Collector) liveDependents(ctx context.Context, owner client.Object) ([]client.Object, error) {
	var out []client.Object
	for _, n := range g.nodes {
		if owner.GetNamespace() != "" && !n.kind.Namespaced {
			continue // a cluster-scoped object has no namespaced owner
		}
		list := newList(n.kind)
		opts := []client.ListOption{client.FromStorage}
		if n.kind.Namespaced && owner.GetNamespace() != "" {
			opts = append(opts, client.InNamespace(owner.GetNamespace()))
		}
		if err := g.c.List(ctx, list, opts...); err != nil {
			return nil, fmt.Errorf("listing the dependents of %s %s/%s: %w", kindOf(owner), owner.GetNamespace(), owner.GetName(), err)
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			if o, ok := it.(client.Object); ok && RefersTo(o.GetOwnerReferences(), owner.GetUID()) {
				out = append(out, o)
			}
		}
	}
	return out, nil
}

// setOwnerRefs replaces obj's ownerReferences by refs with a merge patch
// that requires the resourceVersion obj was read at (errChanged when it
// changed since). An object gone meanwhile is no error.
func (g *Collector) setOwnerRefs(ctx context.Context, obj client.Object, refs []metav1.OwnerReference) error {
	if len(refs) == 0 {
		return g.patchMeta(ctx, obj, "ownerReferences", nil) // null removes the field
	}
	return g.patchMeta(ctx, obj, "ownerReferences", refs)
}

// removeFinalizers removes the orphan and foregroundDeletion finalizers
// from obj, requiring the resourceVersion it was read at.
func (g *Collector) removeFinalizers(ctx context.Context, obj client.Object) error {
	keep := slices.DeleteFunc(slices.Clone(obj.GetFinalizers()), isCollectorFinalizer)
	if len(keep) == 0 {
		return g.patchMeta(ctx, obj, "finalizers", nil) // null removes the field
	}
	return g.patchMeta(ctx, obj, "finalizers", keep)
}

// patchMeta sets metadata.field of obj to value by a merge patch
// conditional on obj's resourceVersion.
func (g *Collector) patchMeta(ctx context.Context, obj client.Object, field string, value any) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion": obj.GetResourceVersion(), field: value}})
	if err != nil {
		return err
	}
	err = g.c.Patch(ctx, obj.DeepCopyObject().(client.Object), client.RawPatch(types.MergePatchType, patch))
	switch {
	case err == nil, client.IsNotFound(err):
		return nil
	case client.IsConflict(err):
		return errChanged
	}
	return fmt.Errorf("setting %s of %s %s/%s: %w", field, kindOf(obj), obj.GetNamespace(), obj.GetName(), err)
}

// deleteExactly deletes obj if it is still the object read (its UID and
// resourceVersion), with policy when not "": errChanged when it changed
// since (its refs may have too), no error when it is gone.
func (g *Collector) deleteExactly(ctx context.Context, obj client.Object, policy metav1.DeletionPropagation) error {
	uid, rv := obj.GetUID(), obj.GetResourceVersion()
	opts := &client.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: &rv}}
	if policy != "" {
		opts.PropagationPolicy = &policy
	}
	err := g.c.Delete(ctx, obj.DeepCopyObject().(client.Object), opts)
	switch {
	case err == nil, client.IsNotFound(err):
		return nil
	case client.IsConflict(err):
		return errChanged
	}
	return fmt.Errorf("deleting %s %s/%s: %w", kindOf(obj), obj.GetNamespace(), obj.GetName(), err)
}

// kindOf names obj's kind for logs.
func kindOf(obj client.Object) string {
	if k := obj.GetObjectKind().GroupVersionKind().Kind; k != "" {
		return k
	}
	return fmt.Sprintf("%T", obj)
}
