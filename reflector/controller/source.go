package controller

import (
	"context"
	"errors"
	"fmt"
	"sync"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/reflector"
)

// Informer is the part of an informer a controller needs: to register a
// handler and to know when the cache has synced. reflector's
// SharedIndexInformer[T] implements it; controllertest.FakeInformer is a
// stand-in for tests.
//
// If the informer also has a method
// RemoveEventHandler(reflector.ResourceEventHandlerRegistration) error,
// the controller removes its handler when it stops.
type Informer[T any] interface {
	AddEventHandler(reflector.ResourceEventHandler[T]) (reflector.ResourceEventHandlerRegistration, error)
	HasSynced() bool
}

// handlerRemover is the optional removal method of an Informer.
type handlerRemover interface {
	RemoveEventHandler(reflector.ResourceEventHandlerRegistration) error
}

// Source feeds Requests into a controller's queue.
type Source interface {
	// Start begins feeding q; the events it turns into Requests may use
	// ctx. It is called once, by the controller's Start (or by Watch on a
	// running controller).
	Start(ctx context.Context, q Queue) error
	// HasSynced reports whether the source has delivered its initial state.
	// The controller starts its workers once every source has synced.
	HasSynced() bool
	// Stop stops feeding the queue. It is called once, after the
	// controller's workers have ended.
	Stop() error
}

// ErrSourceStarted is returned by a Source started twice.
var ErrSourceStarted = errors.New("controller: source already started")

// Kind returns a Source over informer: each event that passes every
// predicate is given to handler (nil means EnqueueRequestForObject). The
// source has synced when both the informer and this source's handler
// registration have (the handler has seen the whole initial list).
func Kind[T metav1.Object](informer Informer[T], handler EventHandler[T], predicates ...Predicate[T]) Source {
	if handler == nil {
		handler = EnqueueRequestForObject[T]()
	}
	return &kind[T]{informer: informer, handler: handler, predicates: predicates}
}

// kind is the Source built by Kind; it is also the informer's handler.
type kind[T metav1.Object] struct {
	informer   Informer[T]
	handler    EventHandler[T]
	predicates []Predicate[T]

	mu  sync.Mutex
	ctx context.Context                            // set by Start; passed to handler
	q   Queue                                      // set by Start
	reg reflector.ResourceEventHandlerRegistration // set by Start
}

func (k *kind[T]) Start(ctx context.Context, q Queue) error {
	k.mu.Lock()
	if k.q != nil {
		k.mu.Unlock()
		return ErrSourceStarted
	}
	k.ctx, k.q = ctx, q
	k.mu.Unlock()

	// Without k.mu: the informer may call the handler (which reads
	// k.ctx and k.q, set above and never changed) before it returns.
	reg, err := k.informer.AddEventHandler(k)
	if err != nil {
		return fmt.Errorf("controller: add event handler: %w", err)
	}
	k.mu.Lock()
	k.reg = reg
	k.mu.Unlock()
	return nil
}

func (k *kind[T]) HasSynced() bool {
	k.mu.Lock()
	reg := k.reg
	k.mu.Unlock()
	return reg != nil && k.informer.HasSynced() && reg.HasSynced()
}

func (k *kind[T]) Stop() error {
	k.mu.Lock()
	reg := k.reg
	k.reg = nil
	k.mu.Unlock()
	if r, ok := k.informer.(handlerRemover); ok && reg != nil {
		return r.RemoveEventHandler(reg)
	}
	return nil
}

// OnAdd implements reflector.ResourceEventHandler.
func (k *kind[T]) OnAdd(obj T, isInInitialList bool) {
	e := CreateEvent[T]{Object: obj, IsInInitialList: isInInitialList}
	for _, p := range k.predicates {
		if !p.Create(e) {
			return
		}
	}
	k.handler.Create(k.ctx, e, k.q)
}

// OnUpdate implements reflector.ResourceEventHandler.
func (k *kind[T]) OnUpdate(oldObj, newObj T) {
	e := UpdateEvent[T]{ObjectOld: oldObj, ObjectNew: newObj}
	for _, p := range k.predicates {
		if !p.Update(e) {
			return
		}
	}
	k.handler.Update(k.ctx, e, k.q)
}

// OnDelete implements reflector.ResourceEventHandler.
func (k *kind[T]) OnDelete(obj T, finalStateUnknown bool) {
	e := DeleteEvent[T]{Object: obj, DeleteStateUnknown: finalStateUnknown}
	for _, p := range k.predicates {
		if !p.Delete(e) {
			return
		}
	}
	k.handler.Delete(k.ctx, e, k.q)
}
