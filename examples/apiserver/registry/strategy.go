// Package registry is the REST storage of widgets: k8s.io/apiserver's
// generic registry with the widget strategy (validation, status handling)
// over whatever storage the RESTOptionsGetter gives it.
package registry

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/names"

	"github.com/listwatch/listwatch/examples/apiserver/apis/widgets"
)

// strategy implements the create, update and delete strategies of widgets.
type strategy struct {
	runtime.ObjectTyper
	names.NameGenerator
}

// newStrategy returns the widget strategy for typer (the server's scheme).
func newStrategy(typer runtime.ObjectTyper) strategy {
	return strategy{typer, names.SimpleNameGenerator}
}

func (strategy) NamespaceScoped() bool { return true }

// PrepareForCreate marks a new widget Ready.
func (strategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	obj.(*widgets.Widget).Status.Phase = "Ready"
}

// PrepareForUpdate keeps the stored status: users change the spec.
func (strategy) PrepareForUpdate(_ context.Context, obj, old runtime.Object) {
	obj.(*widgets.Widget).Status = old.(*widgets.Widget).Status
}

func (strategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return validate(obj.(*widgets.Widget))
}

func (strategy) ValidateUpdate(_ context.Context, obj, _ runtime.Object) field.ErrorList {
	return validate(obj.(*widgets.Widget))
}

func validate(w *widgets.Widget) field.ErrorList {
	var errs field.ErrorList
	if w.Spec.Size < 0 {
		errs = append(errs, field.Invalid(field.NewPath("spec", "size"), w.Spec.Size, "must be at least 0"))
	}
	return errs
}

func (strategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }

func (strategy) WarningsOnUpdate(context.Context, runtime.Object, runtime.Object) []string {
	return nil
}

func (strategy) AllowCreateOnUpdate(context.Context) bool { return false }

func (strategy) AllowUnconditionalUpdate(context.Context) bool { return true }

func (strategy) Canonicalize(runtime.Object) {}

// GetAttrs returns the labels and the selectable fields of a widget
// (metadata.name, metadata.namespace and spec.color).
func GetAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	w, ok := obj.(*widgets.Widget)
	if !ok {
		return nil, nil, fmt.Errorf("not a widget: %T", obj)
	}
	return labels.Set(w.Labels), fields.Set{
		"metadata.name":      w.Name,
		"metadata.namespace": w.Namespace,
		"spec.color":         w.Spec.Color,
	}, nil
}

// matcher is the selection predicate of a list or watch.
func matcher(label labels.Selector, field fields.Selector) storage.SelectionPredicate {
	return storage.SelectionPredicate{Label: label, Field: field, GetAttrs: GetAttrs}
}
