package controllers

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/listwatch/listwatch/examples/nodelifecycle/api"
	"github.com/listwatch/listwatch/reflector/controller"
)

// Config is what every controller of the package needs.
type Config struct {
	// Client writes through the API. Required.
	Client *api.Client
	// Informers are the shared informers (the caller starts them).
	// Required.
	Informers *Informers
	// Workers is each controller's number of concurrent Reconciles; 0
	// means 5 (kube-controller-manager's --concurrent-*-syncs default).
	Workers int
	// Logger receives the controllers' logs; nil means slog.Default().
	Logger *slog.Logger
	// Now is the controllers' clock; nil means time.Now.
	Now func() time.Time
}

// withDefaults fills cfg's zero fields.
func (cfg Config) withDefaults() Config {
	if cfg.Workers <= 0 {
		cfg.Workers = 5
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return cfg
}

// setOwnerRefs replaces obj's ownerReferences by refs with a merge patch
// that requires the resourceVersion obj was read at (a conflict when it
// changed since: the caller's sync runs again on the fresher object).
func setOwnerRefs(ctx context.Context, c *api.Client, k api.Kind, obj metav1.Object, refs []metav1.OwnerReference) error {
	if refs == nil {
		refs = []metav1.OwnerReference{}
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{
		"resourceVersion": obj.GetResourceVersion(), "ownerReferences": refs}})
	if err != nil {
		return err
	}
	return c.Patch(ctx, k, obj.GetNamespace(), obj.GetName(), "", types.MergePatchType, patch, nil)
}

// deleteExactly deletes ns/name only if it still has uid.
func deleteExactly(ctx context.Context, c *api.Client, k api.Kind, ns, name string, uid types.UID,
	policy metav1.DeletionPropagation) error {
	opts := metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}}
	if policy != "" {
		opts.PropagationPolicy = &policy
	}
	return c.DeleteWith(ctx, k, ns, name, opts)
}

// settled is err unless it is a conflict: a write refused because the
// object changed since it was read. The change that won is an informer
// event that reconciles the object again (an event during a Reconcile
// gives one more), so a conflict needs no retry of its own.
func settled(err error) error {
	if apierrors.IsConflict(err) {
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
