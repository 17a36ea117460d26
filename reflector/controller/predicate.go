package controller

import (
	"maps"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

// Predicate filters events before they reach the EventHandler: an event is
// handled only if every predicate of the source returns true.
type Predicate[T any] interface {
	Create(e CreateEvent[T]) bool
	Update(e UpdateEvent[T]) bool
	Delete(e DeleteEvent[T]) bool
}

// PredicateFuncs adapts functions to a Predicate; a nil function lets its
// events through.
type PredicateFuncs[T any] struct {
	CreateFunc func(e CreateEvent[T]) bool
	UpdateFunc func(e UpdateEvent[T]) bool
	DeleteFunc func(e DeleteEvent[T]) bool
}

// Create implements Predicate.
func (p PredicateFuncs[T]) Create(e CreateEvent[T]) bool {
	return p.CreateFunc == nil || p.CreateFunc(e)
}

// Update implements Predicate.
func (p PredicateFuncs[T]) Update(e UpdateEvent[T]) bool {
	return p.UpdateFunc == nil || p.UpdateFunc(e)
}

// Delete implements Predicate.
func (p PredicateFuncs[T]) Delete(e DeleteEvent[T]) bool {
	return p.DeleteFunc == nil || p.DeleteFunc(e)
}

// NewPredicate returns a Predicate that lets an event through when keep
// returns true for its object (the new object of an update).
func NewPredicate[T any](keep func(obj T) bool) Predicate[T] {
	return PredicateFuncs[T]{
		CreateFunc: func(e CreateEvent[T]) bool { return keep(e.Object) },
		UpdateFunc: func(e UpdateEvent[T]) bool { return keep(e.ObjectNew) },
		DeleteFunc: func(e DeleteEvent[T]) bool { return keep(e.Object) },
	}
}

// updatesOnly returns a Predicate that filters updates with changed and
// lets creates and deletes through. Updates with a nil side are let through.
func updatesOnly[T metav1.Object](changed func(old, new T) bool) Predicate[T] {
	return PredicateFuncs[T]{UpdateFunc: func(e UpdateEvent[T]) bool {
		if isNil(e.ObjectOld) || isNil(e.ObjectNew) {
			return true
		}
		return changed(e.ObjectOld, e.ObjectNew)
	}}
}

// GenerationChanged passes updates whose metadata.generation changed, that
// is spec changes, and drops status-only updates and resyncs. Creates and
// deletes pass. (Objects whose server does not set generation never pass
// an update.)
func GenerationChanged[T metav1.Object]() Predicate[T] {
	return updatesOnly(func(old, new T) bool { return old.GetGeneration() != new.GetGeneration() })
}

// LabelsChanged passes updates whose labels changed; creates and deletes
// pass.
func LabelsChanged[T metav1.Object]() Predicate[T] {
	return updatesOnly(func(old, new T) bool { return !maps.Equal(old.GetLabels(), new.GetLabels()) })
}

// AnnotationsChanged passes updates whose annotations changed; creates and
// deletes pass.
func AnnotationsChanged[T metav1.Object]() Predicate[T] {
	return updatesOnly(func(old, new T) bool { return !maps.Equal(old.GetAnnotations(), new.GetAnnotations()) })
}

// ResourceVersionChanged drops resync updates (same resourceVersion on both
// sides); creates and deletes pass.
func ResourceVersionChanged[T metav1.Object]() Predicate[T] {
	return updatesOnly(func(old, new T) bool { return old.GetResourceVersion() != new.GetResourceVersion() })
}

// Not inverts p.
func Not[T any](p Predicate[T]) Predicate[T] {
	return PredicateFuncs[T]{
		CreateFunc: func(e CreateEvent[T]) bool { return !p.Create(e) },
		UpdateFunc: func(e UpdateEvent[T]) bool { return !p.Update(e) },
		DeleteFunc: func(e DeleteEvent[T]) bool { return !p.Delete(e) },
	}
}

// Or passes an event when any of ps passes it (none: nothing passes).
func Or[T any](ps ...Predicate[T]) Predicate[T] {
	return PredicateFuncs[T]{
		CreateFunc: func(e CreateEvent[T]) bool { return anyOf(ps, func(p Predicate[T]) bool { return p.Create(e) }) },
		UpdateFunc: func(e UpdateEvent[T]) bool { return anyOf(ps, func(p Predicate[T]) bool { return p.Update(e) }) },
		DeleteFunc: func(e DeleteEvent[T]) bool { return anyOf(ps, func(p Predicate[T]) bool { return p.Delete(e) }) },
	}
}

func anyOf[T any](ps []Predicate[T], ok func(Predicate[T]) bool) bool {
	for _, p := range ps {
		if ok(p) {
			return true
		}
	}
	return false
}

// LabelSelectorPredicate passes the events whose object (the new object of
// an update) has labels selector matches.
func LabelSelectorPredicate[T metav1.Object](selector labels.Selector) Predicate[T] {
	return NewPredicate(func(obj T) bool {
		return !isNil(obj) && selector.Matches(labels.Set(obj.GetLabels()))
	})
}
