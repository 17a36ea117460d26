package controllers

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/builder"
	"github.com/listwatch/listwatch/client"
	"github.com/listwatch/listwatch/examples/cluster/replication"
	"github.com/listwatch/listwatch/reflector/controller"
)

// BurstReplicas bounds the pods one ReplicaSet sync creates or deletes
// (kube-controller-manager's 500).
const BurstReplicas = 500

// ReplicaSetController keeps each ReplicaSet's pods at spec.replicas.
type ReplicaSetController struct {
	*base
	exp *replication.Expectations
	// Created counts the pods it created (for tests and benchmarks).
	Created atomic.Int64
}

// podOwner is the Request of p's controlling ReplicaSet.
func podOwner(p client.Object) (controller.Request, bool) {
	ref := metav1.GetControllerOf(p)
	if ref == nil || ref.Kind != "ReplicaSet" {
		return controller.Request{}, false
	}
	return requestFor(p.GetNamespace(), ref.Name), true
}

// setupReplicaSets builds the controller on b's manager:
// For(ReplicaSet), and pods through a handler that also counts the
// expectations (Owns would only enqueue).
func setupReplicaSets(b *base) (*ReplicaSetController, error) {
	r := &ReplicaSetController{base: b, exp: replication.NewExpectations(0, b.cfg.Now)}
	err := builder.ControllerManagedBy(b.cfg.Manager).Named("replicaset").
		For(&appsv1.ReplicaSet{}).
		Watches(&corev1.Pod{}, controller.EventHandlerFuncs[client.Object]{
			CreateFunc: func(_ context.Context, e controller.CreateEvent[client.Object], q controller.Queue) {
				if key, ok := podOwner(e.Object); ok {
					r.exp.CreationObserved(key.String())
					q.Add(key)
					return
				}
				r.enqueueSelecting(e.Object, q)
			},
			UpdateFunc: func(_ context.Context, e controller.UpdateEvent[client.Object], q controller.Queue) {
				oldKey, hadOwner := podOwner(e.ObjectOld)
				newKey, hasOwner := podOwner(e.ObjectNew)
				if hadOwner {
					q.Add(oldKey)
				}
				if hasOwner && newKey != oldKey {
					q.Add(newKey)
				}
				if !hasOwner {
					r.enqueueSelecting(e.ObjectNew, q)
				}
			},
			DeleteFunc: func(_ context.Context, e controller.DeleteEvent[client.Object], q controller.Queue) {
				if key, ok := podOwner(e.Object); ok {
					r.exp.DeletionObserved(key.String(), e.Object.GetNamespace()+"/"+e.Object.GetName())
					q.Add(key)
				}
			},
		}).
		WithOptions(controller.Options{MaxConcurrentReconciles: b.cfg.Workers}).
		Complete(r)
	return r, err
}

// enqueueSelecting enqueues the ReplicaSets of p's namespace that select
// the orphan p (one of them adopts it).
func (r *ReplicaSetController) enqueueSelecting(p client.Object, q controller.Queue) {
	for _, rs := range r.rss.GetStore().List() {
		if rs.Namespace == p.GetNamespace() && selects(rs.Spec.Selector, p.GetLabels()) {
			q.Add(requestFor(rs.Namespace, rs.Name))
		}
	}
}

// Reconcile syncs one ReplicaSet: adopt and release pods, create or
// delete pods when its expectations are met, write its status.
func (r *ReplicaSetController) Reconcile(ctx context.Context, req controller.Request) (controller.Result, error) {
	key := req.String()
	rs := &appsv1.ReplicaSet{}
	if err := r.c.Get(ctx, client.ObjectKey(req.NamespacedName), rs); err != nil {
		if client.IsNotFound(err) {
			r.exp.Forget(key)
			return controller.Result{}, nil
		}
		return controller.Result{}, err
	}
	satisfied := r.exp.Satisfied(key)
	sel, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
	if err != nil || sel.Empty() {
		return controller.Result{}, controller.TerminalError(fmt.Errorf("replicaset %s: invalid selector: %v", key, err))
	}
	candidates := indexed(r.pods, string(rs.UID))
	for _, p := range indexed(r.pods, "") {
		if p.Namespace == rs.Namespace {
			candidates = append(candidates, p)
		}
	}
	claims := replication.Claim(rs, sel, candidates)
	owned, err := r.adoptAndRelease(ctx, rs, claims)
	var active []*corev1.Pod
	for _, p := range owned {
		if replication.IsActive(p) {
			active = append(active, p)
		}
	}
	if err == nil && satisfied && rs.DeletionTimestamp == nil {
		err = r.manage(ctx, key, rs, active)
	}
	now := r.cfg.Now()
	status := replication.Status(rs, active, now)
	if !equality.Semantic.DeepEqual(status, rs.Status) {
		rs.Status = status
		if uerr := settled(r.c.Status().Update(ctx, rs)); uerr != nil && !client.IsNotFound(uerr) {
			err = errors.Join(err, uerr)
		}
	}
	if err != nil {
		return controller.Result{}, err
	}
	return controller.Result{RequeueAfter: replication.NextAvailableCheck(rs, active, now)}, nil
}

// adoptAndRelease makes rs the controller of the orphans it selects and
// drops it from the pods it no longer selects; it returns the pods rs
// controls then.
func (r *ReplicaSetController) adoptAndRelease(ctx context.Context, rs *appsv1.ReplicaSet, c replication.Claims[*corev1.Pod]) ([]*corev1.Pod, error) {
	owned := c.Owned
	var errs []error
	for _, p := range c.Adopt {
		refs := append(append([]metav1.OwnerReference(nil), p.OwnerReferences...), replication.ControllerRef(rs, "apps/v1", "ReplicaSet"))
		if err := r.setOwnerRefs(ctx, p, refs); err != nil {
			if err = settled(err); err != nil {
				errs = append(errs, fmt.Errorf("adopting pod %s/%s: %w", p.Namespace, p.Name, err))
			}
			continue
		}
		owned = append(owned, p)
	}
	for _, p := range c.Release {
		if err := r.setOwnerRefs(ctx, p, replication.WithoutOwner(p.OwnerReferences, string(rs.UID))); err != nil && !client.IsNotFound(err) {
			if err = settled(err); err != nil {
				errs = append(errs, fmt.Errorf("releasing pod %s/%s: %w", p.Namespace, p.Name, err))
			}
		}
	}
	return owned, errors.Join(errs...)
}

// manage creates or deletes pods so that rs has spec.replicas active
// ones, at most BurstReplicas per sync, with expectations set first.
func (r *ReplicaSetController) manage(ctx context.Context, key string, rs *appsv1.ReplicaSet, active []*corev1.Pod) error {
	want := int32(1)
	if rs.Spec.Replicas != nil {
		want = *rs.Spec.Replicas
	}
	diff := len(active) - int(want)
	switch {
	case diff < 0:
		n := min(-diff, BurstReplicas)
		r.exp.ExpectCreations(key, n)
		created, err := replication.SlowStart(n, func() error {
			return r.c.Create(ctx, replication.NewPod(rs))
		})
		r.Created.Add(int64(created))
		for range n - created { // failed or skipped: the informer will not see them
			r.exp.CreationObserved(key)
		}
		if err != nil {
			return fmt.Errorf("replicaset %s: created %d of %d pods: %w", key, created, n, err)
		}
	case diff > 0:
		victims := replication.PodsToDelete(active, min(diff, BurstReplicas))
		keys := make([]string, len(victims))
		for i, p := range victims {
			keys[i] = p.Namespace + "/" + p.Name
		}
		r.exp.ExpectDeletions(key, keys)
		var wg sync.WaitGroup
		errs := make([]error, len(victims))
		for i, p := range victims {
			wg.Go(func() {
				if err := r.deleteExactly(ctx, p, ""); err != nil {
					r.exp.DeletionObserved(key, keys[i])
					if !client.IsNotFound(err) {
						errs[i] = err
					}
				}
			})
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return fmt.Errorf("replicaset %s: deleting pods: %w", key, err)
		}
	}
	return nil
}
