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
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/examples/cluster/replication"
	"github.com/listwatch/listwatch/examples/nodelifecycle/api"
	"github.com/listwatch/listwatch/reflector/controller"
)

// BurstReplicas bounds the pods one ReplicaSet sync creates or deletes
// (kube-controller-manager's 500).
const BurstReplicas = 500

// ReplicaSetController keeps each ReplicaSet's pods at spec.replicas.
type ReplicaSetController struct {
	cfg Config
	exp *replication.Expectations
	// Created counts the pods it created (for tests and benchmarks).
	Created atomic.Int64
}

// NewReplicaSetController returns the controller; Controller wires it.
func NewReplicaSetController(cfg Config) *ReplicaSetController {
	cfg = cfg.withDefaults()
	return &ReplicaSetController{cfg: cfg, exp: replication.NewExpectations(0, cfg.Now)}
}

// Controller returns a reflector/controller Controller running r over
// the ReplicaSet and pod informers.
func (r *ReplicaSetController) Controller() (*controller.Controller, error) {
	c, err := controller.New(controller.Options{Name: "replicaset", Reconciler: r,
		MaxConcurrentReconciles: r.cfg.Workers, Logger: r.cfg.Logger})
	if err != nil {
		return nil, err
	}
	if err := c.Watch(controller.Kind(r.cfg.Informers.ReplicaSets, nil)); err != nil {
		return nil, err
	}
	return c, c.Watch(controller.Kind(r.cfg.Informers.Pods, controller.EventHandlerFuncs[*corev1.Pod]{
		CreateFunc: func(_ context.Context, e controller.CreateEvent[*corev1.Pod], q controller.Queue) {
			if key, ok := r.owner(e.Object); ok {
				r.exp.CreationObserved(key.String())
				q.Add(key)
				return
			}
			r.enqueueSelecting(e.Object, q)
		},
		UpdateFunc: func(_ context.Context, e controller.UpdateEvent[*corev1.Pod], q controller.Queue) {
			oldKey, hadOwner := r.owner(e.ObjectOld)
			newKey, hasOwner := r.owner(e.ObjectNew)
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
		DeleteFunc: func(_ context.Context, e controller.DeleteEvent[*corev1.Pod], q controller.Queue) {
			if key, ok := r.owner(e.Object); ok {
				r.exp.DeletionObserved(key.String(), e.Object.Namespace+"/"+e.Object.Name)
				q.Add(key)
			}
		},
	}))
}

// owner is the Request of p's controlling ReplicaSet.
func (r *ReplicaSetController) owner(p *corev1.Pod) (controller.Request, bool) {
	ref := metav1.GetControllerOf(p)
	if ref == nil || ref.Kind != "ReplicaSet" {
		return controller.Request{}, false
	}
	return requestFor(p.Namespace, ref.Name), true
}

// enqueueSelecting enqueues the ReplicaSets of p's namespace that select
// the orphan p (one of them adopts it).
func (r *ReplicaSetController) enqueueSelecting(p *corev1.Pod, q controller.Queue) {
	for _, rs := range r.cfg.Informers.ReplicaSets.GetStore().List() {
		if rs.Namespace == p.Namespace && selects(rs.Spec.Selector, p.Labels) {
			q.Add(requestFor(rs.Namespace, rs.Name))
		}
	}
}

// Reconcile syncs one ReplicaSet: adopt and release pods, create or
// delete pods when its expectations are met, write its status.
func (r *ReplicaSetController) Reconcile(ctx context.Context, req controller.Request) (controller.Result, error) {
	key := req.String()
	rs, ok := r.cfg.Informers.ReplicaSets.GetIndexer().GetByKey(key)
	if !ok {
		r.exp.Forget(key)
		return controller.Result{}, nil
	}
	satisfied := r.exp.Satisfied(key)
	sel, err := metav1.LabelSelectorAsSelector(rs.Spec.Selector)
	if err != nil || sel.Empty() {
		return controller.Result{}, controller.TerminalError(fmt.Errorf("replicaset %s: invalid selector: %v", key, err))
	}
	candidates := r.cfg.Informers.PodsOf(string(rs.UID))
	for _, p := range r.cfg.Informers.PodsOf("") {
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
		next := rs.DeepCopy()
		next.Status = status
		if uerr := settled(r.cfg.Client.UpdateStatus(ctx, api.ReplicaSets, next)); uerr != nil && !apierrors.IsNotFound(uerr) {
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
		if err := setOwnerRefs(ctx, r.cfg.Client, api.Pods, p, refs); err != nil {
			if err = settled(err); err != nil {
				errs = append(errs, fmt.Errorf("adopting pod %s/%s: %w", p.Namespace, p.Name, err))
			}
			continue
		}
		owned = append(owned, p)
	}
	for _, p := range c.Release {
		if err := setOwnerRefs(ctx, r.cfg.Client, api.Pods, p, replication.WithoutOwner(p.OwnerReferences, string(rs.UID))); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("releasing pod %s/%s: %w", p.Namespace, p.Name, err))
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
			return r.cfg.Client.Create(ctx, api.Pods, replication.NewPod(rs))
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
				err := deleteExactly(ctx, r.cfg.Client, api.Pods, p.Namespace, p.Name, p.UID, "")
				if err != nil {
					r.exp.DeletionObserved(key, keys[i])
					if !apierrors.IsNotFound(err) {
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
