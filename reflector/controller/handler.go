package controller

import (
	"context"
	"reflect"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
)

// Queue is the part of the controller's work queue an EventHandler uses.
// *workqueue.RateLimitingQueue[Request] implements it.
type Queue interface {
	// Add asks for req to be reconciled; duplicates are merged.
	Add(req Request)
	// AddAfter asks for req to be reconciled once d has elapsed.
	AddAfter(req Request, d time.Duration)
}

// EventHandler turns informer events (that passed the source's predicates)
// into Requests. ctx is the one the controller was started with. Calls for
// one source come from one goroutine, in event order.
type EventHandler[T any] interface {
	Create(ctx context.Context, e CreateEvent[T], q Queue)
	Update(ctx context.Context, e UpdateEvent[T], q Queue)
	Delete(ctx context.Context, e DeleteEvent[T], q Queue)
}

// EventHandlerFuncs adapts functions to an EventHandler; nil functions
// ignore their events.
type EventHandlerFuncs[T any] struct {
	CreateFunc func(ctx context.Context, e CreateEvent[T], q Queue)
	UpdateFunc func(ctx context.Context, e UpdateEvent[T], q Queue)
	DeleteFunc func(ctx context.Context, e DeleteEvent[T], q Queue)
}

// Create implements EventHandler.
func (f EventHandlerFuncs[T]) Create(ctx context.Context, e CreateEvent[T], q Queue) {
	if f.CreateFunc != nil {
		f.CreateFunc(ctx, e, q)
	}
}

// Update implements EventHandler.
func (f EventHandlerFuncs[T]) Update(ctx context.Context, e UpdateEvent[T], q Queue) {
	if f.UpdateFunc != nil {
		f.UpdateFunc(ctx, e, q)
	}
}

// Delete implements EventHandler.
func (f EventHandlerFuncs[T]) Delete(ctx context.Context, e DeleteEvent[T], q Queue) {
	if f.DeleteFunc != nil {
		f.DeleteFunc(ctx, e, q)
	}
}

// RequestFor returns the Request naming obj, and false for a nil object or
// one without a name.
func RequestFor[T metav1.Object](obj T) (Request, bool) {
	if isNil(obj) || obj.GetName() == "" {
		return Request{}, false
	}
	return Request{types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}}, true
}

// EnqueueRequestForObject enqueues the Request naming the object of each
// event (the new object for an update). It is the default handler of Kind.
// Nil or unnamed objects are skipped.
func EnqueueRequestForObject[T metav1.Object]() EventHandler[T] {
	add := func(q Queue, obj T) {
		if req, ok := RequestFor(obj); ok {
			q.Add(req)
		}
	}
	return EventHandlerFuncs[T]{
		CreateFunc: func(_ context.Context, e CreateEvent[T], q Queue) { add(q, e.Object) },
		UpdateFunc: func(_ context.Context, e UpdateEvent[T], q Queue) {
			if isNil(e.ObjectNew) {
				add(q, e.ObjectOld)
				return
			}
			add(q, e.ObjectNew)
		},
		DeleteFunc: func(_ context.Context, e DeleteEvent[T], q Queue) { add(q, e.Object) },
	}
}

// MapFunc maps an object to the Requests it should trigger (for example
// its owner, or every object that refers to it).
type MapFunc[T any] func(ctx context.Context, obj T) []Request

// EnqueueRequestsFromMapFunc enqueues the Requests fn returns for the object
// of each event; for an update, those of both the old and the new object.
func EnqueueRequestsFromMapFunc[T any](fn MapFunc[T]) EventHandler[T] {
	add := func(ctx context.Context, q Queue, objs ...T) {
		for _, obj := range objs {
			if isNil(obj) {
				continue
			}
			for _, req := range fn(ctx, obj) {
				q.Add(req) // the queue merges duplicates
			}
		}
	}
	return EventHandlerFuncs[T]{
		CreateFunc: func(ctx context.Context, e CreateEvent[T], q Queue) { add(ctx, q, e.Object) },
		UpdateFunc: func(ctx context.Context, e UpdateEvent[T], q Queue) { add(ctx, q, e.ObjectOld, e.ObjectNew) },
		DeleteFunc: func(ctx context.Context, e DeleteEvent[T], q Queue) { add(ctx, q, e.Object) },
	}
}

// isNil reports whether v is nil, including a typed nil pointer in an
// interface or type parameter.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Interface, reflect.Func, reflect.Chan:
		return rv.IsNil()
	}
	return false
}

// EnqueueRequestForOwner enqueues, for each event, the Request naming the
// object's controller: the ownerReference with controller=true whose
// apiVersion has ownerKind's group and whose kind is ownerKind's kind
// (both the old and the new owner on an update that changed it). The
// owner's namespace is the object's, or "" when ownerNamespaced is false.
// Objects without such a reference enqueue nothing.
func EnqueueRequestForOwner[T metav1.Object](ownerKind schema.GroupKind, ownerNamespaced bool) EventHandler[T] {
	return EnqueueRequestsFromMapFunc(func(_ context.Context, obj T) []Request {
		for _, ref := range obj.GetOwnerReferences() {
			if ref.Controller == nil || !*ref.Controller || ref.Kind != ownerKind.Kind {
				continue
			}
			gv, err := schema.ParseGroupVersion(ref.APIVersion)
			if err != nil || gv.Group != ownerKind.Group {
				continue
			}
			ns := ""
			if ownerNamespaced {
				ns = obj.GetNamespace()
			}
			return []Request{{types.NamespacedName{Namespace: ns, Name: ref.Name}}}
		}
		return nil
	})
}
