package controllers

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/listwatch/listwatch/examples/cluster/garbage"
	"github.com/listwatch/listwatch/examples/nodelifecycle/api"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/reflector/controller"
)

// GarbageCollector deletes objects whose owners are gone (background
// deletion), deletes the dependents of owners deleted in the foreground
// before letting those go, and orphans the dependents of owners deleted
// with orphaning. It knows the example's owner chain: Deployment →
// ReplicaSet → Pod; owners of other kinds (the simulator's DaemonSet)
// are taken as present.
type GarbageCollector struct {
	cfg Config
}

// NewGarbageCollector returns the collector; Controllers wires it.
func NewGarbageCollector(cfg Config) *GarbageCollector {
	return &GarbageCollector{cfg: cfg.withDefaults()}
}

// gcNode is one kind of the chain for the collector.
type gcNode struct {
	kind api.Kind
	// get reads the cached object of key.
	get func(key string) (metav1.Object, bool)
	// dependents returns the cached objects controlled by uid (nil for
	// pods, which own nothing).
	dependents func(uid string) []metav1.Object
	// depKind is the dependents' kind.
	depKind api.Kind
}

// nodes are the collector's view of the three kinds.
func (g *GarbageCollector) nodes() map[string]*gcNode {
	inf := g.cfg.Informers
	return map[string]*gcNode{
		"Deployment": {kind: api.Deployments, depKind: api.ReplicaSets,
			get:        cached(inf.Deployments.GetIndexer()),
			dependents: func(uid string) []metav1.Object { return objects(inf.ReplicaSetsOf(uid)) }},
		"ReplicaSet": {kind: api.ReplicaSets, depKind: api.Pods,
			get:        cached(inf.ReplicaSets.GetIndexer()),
			dependents: func(uid string) []metav1.Object { return objects(inf.PodsOf(uid)) }},
		"Pod": {kind: api.Pods, get: cached(inf.Pods.GetIndexer())},
	}
}

// cached reads from an indexer as metav1.Object.
func cached[T reflector.Object](ix reflector.Indexer[T]) func(string) (metav1.Object, bool) {
	return func(key string) (metav1.Object, bool) {
		obj, ok := ix.GetByKey(key)
		return obj, ok
	}
}

// objects converts typed objects to metav1.Object.
func objects[T metav1.Object](in []T) []metav1.Object {
	out := make([]metav1.Object, len(in))
	for i, o := range in {
		out[i] = o
	}
	return out
}

// Controllers returns one controller per kind: each reconciles its
// objects as dependents (are their owners there?) and as owners (does a
// deletion wait for them?).
func (g *GarbageCollector) Controllers() ([]*controller.Controller, error) {
	nodes := g.nodes()
	inf := g.cfg.Informers
	deps, err := g.controller("gc-deployments", nodes["Deployment"], nodes)
	if err != nil {
		return nil, err
	}
	rss, err := g.controller("gc-replicasets", nodes["ReplicaSet"], nodes)
	if err != nil {
		return nil, err
	}
	pods, err := g.controller("gc-pods", nodes["Pod"], nodes)
	if err != nil {
		return nil, err
	}
	// Each kind's own events, and its owners' and dependents' deletions.
	errs := []error{
		deps.Watch(controller.Kind(inf.Deployments, nil)),
		deps.Watch(controller.Kind(inf.ReplicaSets, ownersOnDelete[*appsv1.ReplicaSet]("Deployment"))),
		rss.Watch(controller.Kind(inf.ReplicaSets, nil)),
		rss.Watch(controller.Kind(inf.Deployments, dependentsOnDelete[*appsv1.Deployment](nodes["Deployment"]))),
		rss.Watch(controller.Kind(inf.Pods, ownersOnDelete[*corev1.Pod]("ReplicaSet"))),
		pods.Watch(controller.Kind(inf.Pods, controller.EventHandlerFuncs[*corev1.Pod]{
			CreateFunc: func(_ context.Context, e controller.CreateEvent[*corev1.Pod], q controller.Queue) {
				if len(e.Object.OwnerReferences) > 0 { // most pods' owners are there: the check is cheap, from the cache
					q.Add(requestFor(e.Object.Namespace, e.Object.Name))
				}
			},
			UpdateFunc: func(_ context.Context, e controller.UpdateEvent[*corev1.Pod], q controller.Queue) {
				if len(e.ObjectNew.OwnerReferences) > 0 && (e.ObjectNew.DeletionTimestamp != nil ||
					!slices.Equal(e.ObjectOld.OwnerReferences, e.ObjectNew.OwnerReferences)) {
					q.Add(requestFor(e.ObjectNew.Namespace, e.ObjectNew.Name))
				}
			},
		})),
		pods.Watch(controller.Kind(inf.ReplicaSets, dependentsOnDelete[*appsv1.ReplicaSet](nodes["ReplicaSet"]))),
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return []*controller.Controller{deps, rss, pods}, nil
}

// ownersOnDelete enqueues the owner (of kind) of a deleted dependent: a
// foreground deletion may be waiting for it.
func ownersOnDelete[T metav1.Object](kind string) controller.EventHandler[T] {
	return controller.EventHandlerFuncs[T]{
		DeleteFunc: func(_ context.Context, e controller.DeleteEvent[T], q controller.Queue) {
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
func dependentsOnDelete[T metav1.Object](owner *gcNode) controller.EventHandler[T] {
	enqueue := func(obj T, q controller.Queue) {
		for _, d := range owner.dependents(string(obj.GetUID())) {
			q.Add(requestFor(d.GetNamespace(), d.GetName()))
		}
	}
	return controller.EventHandlerFuncs[T]{
		UpdateFunc: func(_ context.Context, e controller.UpdateEvent[T], q controller.Queue) {
			if e.ObjectNew.GetDeletionTimestamp() != nil && e.ObjectOld.GetDeletionTimestamp() == nil {
				enqueue(e.ObjectNew, q)
			}
		},
		DeleteFunc: func(_ context.Context, e controller.DeleteEvent[T], q controller.Queue) { enqueue(e.Object, q) },
	}
}

// controller builds the collector's controller of one kind.
func (g *GarbageCollector) controller(name string, n *gcNode, nodes map[string]*gcNode) (*controller.Controller, error) {
	return controller.New(controller.Options{Name: name, MaxConcurrentReconciles: g.cfg.Workers, Logger: g.cfg.Logger,
		Reconciler: controller.ReconcileFunc(func(ctx context.Context, req controller.Request) (controller.Result, error) {
			obj, ok := n.get(req.String())
			if !ok {
				return controller.Result{}, nil
			}
			if obj.GetDeletionTimestamp() != nil {
				return controller.Result{}, g.finishOwner(ctx, n, obj)
			}
			return controller.Result{}, g.checkOwners(ctx, n, obj, nodes)
		})})
}

// ownerState looks up ref (in obj's namespace): from the cache when it
// has the owner with the reference's UID, else live (the cache may not
// have seen an owner created a moment ago).
func (g *GarbageCollector) ownerState(ctx context.Context, ns string, ref metav1.OwnerReference, nodes map[string]*gcNode) (garbage.OwnerState, error) {
	n, ok := nodes[ref.Kind]
	if !ok || (ref.APIVersion != "apps/v1" && ref.APIVersion != "v1") {
		return garbage.OwnerPresent, nil // not a kind the example serves: never collected
	}
	state := func(o metav1.Object) garbage.OwnerState {
		switch {
		case o.GetUID() != ref.UID:
			return garbage.OwnerAbsent
		case o.GetDeletionTimestamp() != nil && slices.Contains(o.GetFinalizers(), api.FinalizerForeground):
			return garbage.OwnerDeletingForeground
		}
		return garbage.OwnerPresent
	}
	if o, ok := n.get(ns + "/" + ref.Name); ok && o.GetUID() == ref.UID {
		return state(o), nil
	}
	live := &metav1.PartialObjectMetadata{}
	err := g.cfg.Client.Get(ctx, n.kind, ns, ref.Name, live)
	switch {
	case apierrors.IsNotFound(err):
		return garbage.OwnerAbsent, nil
	case err != nil:
		return 0, err
	}
	return state(live), nil
}

// checkOwners deletes obj when its owners are gone, or drops the
// references of the gone ones when another owner remains.
func (g *GarbageCollector) checkOwners(ctx context.Context, n *gcNode, obj metav1.Object, nodes map[string]*gcNode) error {
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
		g.cfg.Logger.Debug("garbage collecting", "kind", n.kind.Kind, "namespace", obj.GetNamespace(), "name", obj.GetName(),
			"propagation", d.Propagation)
		err := deleteExactly(ctx, g.cfg.Client, n.kind, obj.GetNamespace(), obj.GetName(), obj.GetUID(), d.Propagation)
		if apierrors.IsNotFound(err) {
			return nil
		}
		return settled(err)
	case len(d.RemoveRefs) > 0:
		keep := slices.DeleteFunc(slices.Clone(refs), func(r metav1.OwnerReference) bool { return slices.Contains(d.RemoveRefs, r.UID) })
		return settled(setOwnerRefs(ctx, g.cfg.Client, n.kind, obj, keep))
	}
	return nil
}

// finishOwner serves an owner being deleted: with the orphan finalizer it
// removes itself from its dependents, with foregroundDeletion it deletes
// them; once that is done it removes the finalizer, and the server
// deletes the owner with its last finalizer.
func (g *GarbageCollector) finishOwner(ctx context.Context, n *gcNode, obj metav1.Object) error {
	fins := obj.GetFinalizers()
	orphan, fg := slices.Contains(fins, api.FinalizerOrphan), slices.Contains(fins, api.FinalizerForeground)
	if (!orphan && !fg) || n.dependents == nil {
		if orphan || fg {
			return g.removeFinalizers(ctx, n, obj)
		}
		return nil
	}
	var errs []error
	blocking := 0
	for _, dep := range n.dependents(string(obj.GetUID())) {
		if !garbage.RefersTo(dep.GetOwnerReferences(), obj.GetUID()) {
			continue
		}
		if orphan {
			refs := slices.DeleteFunc(slices.Clone(dep.GetOwnerReferences()), func(r metav1.OwnerReference) bool { return r.UID == obj.GetUID() })
			if err := setOwnerRefs(ctx, g.cfg.Client, n.depKind, dep, refs); err != nil && !apierrors.IsNotFound(err) {
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
		err := deleteExactly(ctx, g.cfg.Client, n.depKind, dep.GetNamespace(), dep.GetName(), dep.GetUID(), metav1.DeletePropagationForeground)
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, settled(err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if fg && blocking > 0 {
		return nil // their deletion events bring the owner back here
	}
	return g.removeFinalizers(ctx, n, obj)
}

// removeFinalizers removes the orphan and foregroundDeletion finalizers
// from obj (with its resourceVersion as a precondition).
func (g *GarbageCollector) removeFinalizers(ctx context.Context, n *gcNode, obj metav1.Object) error {
	keep := slices.DeleteFunc(slices.Clone(obj.GetFinalizers()), func(f string) bool {
		return f == api.FinalizerOrphan || f == api.FinalizerForeground
	})
	if keep == nil {
		keep = []string{}
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": obj.GetResourceVersion(), "finalizers": keep}})
	if err != nil {
		return err
	}
	err = g.cfg.Client.Patch(ctx, n.kind, obj.GetNamespace(), obj.GetName(), "", "application/merge-patch+json", patch, nil)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err = settled(err); err != nil {
		return fmt.Errorf("removing finalizers of %s %s/%s: %w", n.kind.Kind, obj.GetNamespace(), obj.GetName(), err)
	}
	return nil
}
