package controllers

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/listwatch/listwatch/cache"
	"github.com/listwatch/listwatch/client"
	"github.com/listwatch/listwatch/manager"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/reflector/controller"
)

// ControllerUIDIndex indexes objects by the UID of their controller
// (ownerReference with controller: true); orphans are indexed under "".
const ControllerUIDIndex = "controller-uid"

// Config is what every controller of the package needs.
type Config struct {
	// Manager runs the controllers; they read through its cache and
	// write through its client. Required.
	Manager *manager.Manager
	// Workers is each controller's number of concurrent Reconciles; 0
	// means 5 (kube-controller-manager's --concurrent-*-syncs default).
	Workers int
	// Now is the controllers' clock; nil means time.Now.
	Now func() time.Time
}

// withDefaults fills cfg's zero fields.
func (cfg Config) withDefaults() Config {
	if cfg.Workers <= 0 {
		cfg.Workers = 5
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return cfg
}

// base is what the controllers share: the manager's client and its
// cache's informers of the three workload kinds (indexed by controller
// UID). The manager starts the controllers of a newly elected replica only
// once these informers hold the previous leader's last writes (see package
// manager, "A new leader acts on fresh caches").
type base struct {
	cfg  Config
	c    client.Client
	log  *slog.Logger
	deps reflector.SharedInformer[*appsv1.Deployment]
	rss  reflector.SharedInformer[*appsv1.ReplicaSet]
	pods reflector.SharedInformer[*corev1.Pod]
}

// newBase gets the cache's informers and adds the controller-UID index to
// the ReplicaSet and pod informers.
func newBase(cfg Config) (*base, error) {
	cfg = cfg.withDefaults()
	ch := cfg.Manager.GetCache()
	b := &base{cfg: cfg, c: cfg.Manager.GetClient(), log: cfg.Manager.GetLogger()}
	var err error
	if b.deps, err = cache.InformerOf[*appsv1.Deployment](ch); err != nil {
		return nil, err
	}
	if b.rss, err = cache.InformerOf[*appsv1.ReplicaSet](ch); err != nil {
		return nil, err
	}
	if b.pods, err = cache.InformerOf[*corev1.Pod](ch); err != nil {
		return nil, err
	}
	if err := b.rss.AddIndexers(reflector.Indexers[*appsv1.ReplicaSet]{ControllerUIDIndex: controllerUID[*appsv1.ReplicaSet]}); err != nil {
		return nil, err
	}
	if err := b.pods.AddIndexers(reflector.Indexers[*corev1.Pod]{ControllerUIDIndex: controllerUID[*corev1.Pod]}); err != nil {
		return nil, err
	}
	return b, nil
}

// controllerUID indexes obj by its controller's UID.
func controllerUID[T client.Object](obj T) ([]string, error) {
	if ref := metav1.GetControllerOf(obj); ref != nil {
		return []string{string(ref.UID)}, nil
	}
	return []string{""}, nil
}

// indexed returns the objects of inf controlled by uid ("": orphans).
// They are the informer's own, shared and read-only: a ReplicaSet with
// 3,000 pods is read without copying them (the cache's List copies every
// object it returns).
func indexed[T client.Object](inf reflector.SharedInformer[T], uid string) []T {
	objs, _ := inf.GetIndexer().ByIndex(ControllerUIDIndex, uid)
	return objs
}

// setOwnerRefs replaces obj's ownerReferences by refs with a merge patch
// that requires the resourceVersion obj was read at (a conflict when it
// changed since: the caller's sync runs again on the fresher object).
func (b *base) setOwnerRefs(ctx context.Context, obj client.Object, refs []metav1.OwnerReference) error {
	if refs == nil {
		refs = []metav1.OwnerReference{}
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion": obj.GetResourceVersion(), "ownerReferences": refs}})
	if err != nil {
		return err
	}
	return b.c.Patch(ctx, obj.DeepCopyObject().(client.Object), client.RawPatch(types.MergePatchType, patch))
}

// deleteExactly deletes obj only if its UID is still obj's, with policy
// when not "".
func (b *base) deleteExactly(ctx context.Context, obj client.Object, policy metav1.DeletionPropagation) error {
	uid := obj.GetUID()
	opts := &client.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}
	if policy != "" {
		opts.PropagationPolicy = &policy
	}
	return b.c.Delete(ctx, obj.DeepCopyObject().(client.Object), opts)
}

// settled is err unless it is a conflict: a write refused because the
// object changed since it was read. The change that won is an informer
// event that reconciles the object again (an event during a Reconcile
// gives one more), so a conflict needs no retry of its own.
func settled(err error) error {
	if client.IsConflict(err) {
		return nil
	}
	return err
}

// requestFor is the Request of ns/name.
func requestFor(ns, name string) controller.Request {
	return controller.Request{NamespacedName: types.NamespacedName{Namespace: ns, Name: name}}
}

// selects reports whether sel (a LabelSelector) selects lbls; a malformed
// or empty selector selects nothing.
func selects(sel *metav1.LabelSelector, lbls map[string]string) bool {
	if sel == nil {
		return false
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil || s.Empty() {
		return false
	}
	return s.Matches(labels.Set(lbls))
}
