package controllers

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/listwatch/listwatch/builder"
	"github.com/listwatch/listwatch/client"
	"github.com/listwatch/listwatch/examples/cluster/replication"
	"github.com/listwatch/listwatch/examples/cluster/rollout"
	"github.com/listwatch/listwatch/reflector/controller"
)

// DeploymentController rolls each Deployment's ReplicaSets towards its
// template: rolling update or Recreate, scaling, pause, rollback (a
// template equal to an old ReplicaSet's revives it), history cleanup and
// status.
type DeploymentController struct {
	*base
}

// setupDeployments builds the controller on b's manager:
// For(Deployment), and ReplicaSets mapped to their controlling
// Deployment, or for an orphan to the Deployments that select it (Owns
// would skip orphans, which adoption needs).
func setupDeployments(b *base) (*DeploymentController, error) {
	dc := &DeploymentController{base: b}
	err := builder.ControllerManagedBy(b.cfg.Manager).Named("deployment").
		For(&appsv1.Deployment{}).
		Watches(&appsv1.ReplicaSet{}, controller.EnqueueRequestsFromMapFunc(func(_ context.Context, rs client.Object) []controller.Request {
			if ref := metav1.GetControllerOf(rs); ref != nil {
				if ref.Kind == "Deployment" {
					return []controller.Request{requestFor(rs.GetNamespace(), ref.Name)}
				}
				return nil
			}
			var out []controller.Request
			for _, d := range dc.deps.GetStore().List() {
				if d.Namespace == rs.GetNamespace() && selects(d.Spec.Selector, rs.GetLabels()) {
					out = append(out, requestFor(d.Namespace, d.Name))
				}
			}
			return out
		})).
		WithOptions(controller.Options{MaxConcurrentReconciles: b.cfg.Workers}).
		Complete(dc)
	return dc, err
}

// Reconcile syncs one Deployment.
func (dc *DeploymentController) Reconcile(ctx context.Context, req controller.Request) (controller.Result, error) {
	stored := &appsv1.Deployment{}
	if err := dc.c.Get(ctx, client.ObjectKey(req.NamespacedName), stored); err != nil {
		return controller.Result{}, client.IgnoreNotFound(err)
	}
	d := rollout.Defaulted(stored)
	sel, err := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	if err != nil || sel.Empty() {
		return controller.Result{}, controller.TerminalError(fmt.Errorf("deployment %s: invalid selector: %v", req, err))
	}
	all, err := dc.claim(ctx, d)
	if err != nil {
		return controller.Result{}, err
	}
	if d.DeletionTimestamp != nil {
		return dc.writeStatus(ctx, d, all, rollout.FindNewReplicaSet(d, all), false)
	}
	newRS := rollout.FindNewReplicaSet(d, all)
	old := rollout.SplitOld(all, newRS)
	if d.Spec.Paused || rollout.IsScalingEvent(d, all) {
		if err := dc.scale(ctx, d, newRS, old); err != nil {
			return controller.Result{}, err
		}
		return dc.writeStatus(ctx, d, all, newRS, false)
	}
	created := false
	if d.Spec.Strategy.Type == appsv1.RecreateDeploymentStrategyType {
		if steps := rollout.RecreateScaleDown(old); len(steps) > 0 {
			return dc.applyThenStatus(ctx, d, all, newRS, steps)
		}
		if !rollout.OldPodsGone(old) {
			return dc.writeStatus(ctx, d, all, newRS, false)
		}
	}
	if newRS, created, err = dc.ensureNewReplicaSet(ctx, d, newRS, old); err != nil || newRS == nil {
		return controller.Result{}, err // nil newRS: a conflict, whose event brings the next sync
	}
	if created {
		all = append(old, newRS)
		return dc.writeStatus(ctx, d, all, newRS, true)
	}
	all = append(old, newRS)
	want, err := rollout.NewReplicaSetReplicas(d, all, newRS)
	if err != nil {
		return controller.Result{}, controller.TerminalError(err)
	}
	if want != *newRS.Spec.Replicas {
		return dc.applyThenStatus(ctx, d, all, newRS, []rollout.Scale{{RS: newRS, To: want}})
	}
	steps, err := rollout.OldReplicaSetsScaleDown(d, old, newRS, all)
	if err != nil {
		return controller.Result{}, controller.TerminalError(err)
	}
	if len(steps) > 0 {
		return dc.applyThenStatus(ctx, d, all, newRS, steps)
	}
	if err := dc.cleanup(ctx, d, old); err != nil {
		return controller.Result{}, err
	}
	return dc.writeStatus(ctx, d, all, newRS, false)
}

// claim returns d's ReplicaSets after adopting the orphans it selects and
// releasing those it no longer selects.
func (dc *DeploymentController) claim(ctx context.Context, d *appsv1.Deployment) ([]*appsv1.ReplicaSet, error) {
	sel, _ := metav1.LabelSelectorAsSelector(d.Spec.Selector)
	candidates := indexed(dc.rss, string(d.UID))
	for _, rs := range indexed(dc.rss, "") {
		if rs.Namespace == d.Namespace {
			candidates = append(candidates, rs)
		}
	}
	c := replication.Claim(d, sel, candidates)
	owned := c.Owned
	var errs []error
	for _, rs := range c.Adopt {
		refs := append(append([]metav1.OwnerReference(nil), rs.OwnerReferences...), replication.ControllerRef(d, "apps/v1", "Deployment"))
		if err := dc.setOwnerRefs(ctx, rs, refs); err != nil {
			if err = settled(err); err != nil {
				errs = append(errs, fmt.Errorf("adopting replicaset %s: %w", rs.Name, err))
			}
			continue
		}
		owned = append(owned, rs)
	}
	for _, rs := range c.Release {
		if err := settled(dc.setOwnerRefs(ctx, rs, replication.WithoutOwner(rs.OwnerReferences, string(d.UID)))); err != nil && !client.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("releasing replicaset %s: %w", rs.Name, err))
		}
	}
	return owned, errors.Join(errs...)
}

// ensureNewReplicaSet creates d's new ReplicaSet when there is none, or
// gives the existing one the newest revision (a rollback) and d's
// replica annotations. It reports whether it created one.
func (dc *DeploymentController) ensureNewReplicaSet(ctx context.Context, d *appsv1.Deployment, newRS *appsv1.ReplicaSet,
	old []*appsv1.ReplicaSet) (*appsv1.ReplicaSet, bool, error) {
	rev := rollout.NextRevision(newRS, old)
	if newRS != nil {
		next := newRS.DeepCopy()
		changed := rollout.SetReplicaAnnotations(next, d, rev)
		if next.Spec.MinReadySeconds != d.Spec.MinReadySeconds {
			next.Spec.MinReadySeconds, changed = d.Spec.MinReadySeconds, true
		}
		if changed {
			if err := dc.c.Update(ctx, next); err != nil {
				return nil, false, settled(err)
			}
		}
		return next, false, dc.setRevision(ctx, d, rev)
	}
	// Sized as the first scale-up step would size it.
	zero := rollout.NewReplicaSet(d, rev, 0)
	want, err := rollout.NewReplicaSetReplicas(d, append(old, zero), zero)
	if err != nil {
		return nil, false, controller.TerminalError(err)
	}
	if d.Spec.Strategy.Type == appsv1.RecreateDeploymentStrategyType {
		want = *d.Spec.Replicas
	}
	rs := rollout.NewReplicaSet(d, rev, want)
	err = dc.c.Create(ctx, rs)
	if client.IsAlreadyExists(err) {
		// Made by an earlier sync (or leader) that the informer has not
		// shown yet, or a hash collision: the next sync finds it, or
		// bumps the collision count.
		existing := &appsv1.ReplicaSet{}
		if gerr := dc.c.Get(ctx, client.KeyOf(rs), existing, client.FromStorage); gerr == nil &&
			!rollout.EqualTemplates(&existing.Spec.Template, &d.Spec.Template) {
			return nil, false, dc.bumpCollisionCount(ctx, d)
		}
		return nil, false, fmt.Errorf("deployment %s/%s: replicaset %s exists but is not in the cache yet", d.Namespace, d.Name, rs.Name)
	}
	if err != nil {
		return nil, false, err
	}
	return rs, true, dc.setRevision(ctx, d, rev)
}

// bumpCollisionCount raises d's status.collisionCount, so that its next
// template hash differs from the clashing one.
func (dc *DeploymentController) bumpCollisionCount(ctx context.Context, d *appsv1.Deployment) error {
	next := d.DeepCopy()
	n := int32(1)
	if next.Status.CollisionCount != nil {
		n = *next.Status.CollisionCount + 1
	}
	next.Status.CollisionCount = &n
	return settled(dc.c.Status().Update(ctx, next))
}

// setRevision records rev as d's revision annotation (kubectl rollout
// history and undo read it).
func (dc *DeploymentController) setRevision(ctx context.Context, d *appsv1.Deployment, rev int64) error {
	v := strconv.FormatInt(rev, 10)
	if d.Annotations[rollout.RevisionAnnotation] == v {
		return nil
	}
	patch := fmt.Appendf(nil, `{"metadata":{"annotations":{%q:%q}}}`, rollout.RevisionAnnotation, v)
	return client.IgnoreNotFound(dc.c.Patch(ctx, d.DeepCopy(), client.RawPatch(types.MergePatchType, patch)))
}

// scale serves a scaling event or a paused Deployment: proportional
// scaling, no rollout.
func (dc *DeploymentController) scale(ctx context.Context, d *appsv1.Deployment, newRS *appsv1.ReplicaSet, old []*appsv1.ReplicaSet) error {
	steps, err := rollout.ProportionalScale(d, newRS, old)
	if err != nil {
		return controller.TerminalError(err)
	}
	if err := dc.apply(ctx, d, steps); err != nil {
		return err
	}
	// The active sets that kept their size still learn the new count, so
	// that the scaling event ends.
	scaled := map[string]bool{}
	for _, s := range steps {
		scaled[s.RS.Name] = true
	}
	var keep []rollout.Scale
	for _, rs := range rollout.Active(append(old, newRS)) {
		if !scaled[rs.Name] {
			keep = append(keep, rollout.Scale{RS: rs, To: *rs.Spec.Replicas})
		}
	}
	return dc.apply(ctx, d, keep)
}

// apply scales ReplicaSets, recording d's replica annotations on each.
func (dc *DeploymentController) apply(ctx context.Context, d *appsv1.Deployment, steps []rollout.Scale) error {
	var errs []error
	for _, s := range steps {
		next := s.RS.DeepCopy()
		to := s.To
		changed := next.Spec.Replicas == nil || *next.Spec.Replicas != to
		next.Spec.Replicas = &to
		if rollout.SetReplicaAnnotations(next, d, 0) || changed {
			if err := settled(dc.c.Update(ctx, next)); err != nil && !client.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("scaling replicaset %s to %d: %w", s.RS.Name, to, err))
			}
		}
	}
	return errors.Join(errs...)
}

// applyThenStatus applies steps and writes the status.
func (dc *DeploymentController) applyThenStatus(ctx context.Context, d *appsv1.Deployment, all []*appsv1.ReplicaSet,
	newRS *appsv1.ReplicaSet, steps []rollout.Scale) (controller.Result, error) {
	if err := dc.apply(ctx, d, steps); err != nil {
		return controller.Result{}, err
	}
	return dc.writeStatus(ctx, d, all, newRS, false)
}

// cleanup deletes the old ReplicaSets beyond the revision history limit.
func (dc *DeploymentController) cleanup(ctx context.Context, d *appsv1.Deployment, old []*appsv1.ReplicaSet) error {
	var errs []error
	for _, rs := range rollout.HistoryToDelete(d, old) {
		if err := dc.deleteExactly(ctx, rs, ""); err != nil && !client.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// writeStatus computes d's status from its ReplicaSets and writes it when
// it changed; the result asks to look again at the progress deadline.
func (dc *DeploymentController) writeStatus(ctx context.Context, d *appsv1.Deployment, all []*appsv1.ReplicaSet,
	newRS *appsv1.ReplicaSet, created bool) (controller.Result, error) {
	now := dc.cfg.Now()
	s := rollout.Counts(d, all, newRS, now)
	wait := rollout.Progress(d, &s, newRS, created, now)
	if !equality.Semantic.DeepEqual(s, d.Status) {
		next := d.DeepCopy()
		next.Status = s
		if err := settled(dc.c.Status().Update(ctx, next)); err != nil && !client.IsNotFound(err) {
			return controller.Result{}, err
		}
	}
	if wait > 0 {
		return controller.Result{RequeueAfter: wait + 10*time.Millisecond}, nil
	}
	return controller.Result{}, nil
}
