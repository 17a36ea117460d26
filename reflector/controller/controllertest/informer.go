// Package controllertest provides test doubles for code built on
// reflector/controller: a FakeInformer that delivers the events a test
// tells it to, synchronously.
package controllertest

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/listwatch/listwatch/reflector"
)

// ErrUnknownRegistration is returned by RemoveEventHandler for a handle the
// informer did not issue (or already removed).
var ErrUnknownRegistration = errors.New("controllertest: unknown handler registration")

// FakeInformer implements controller.Informer[T] without a server: Add,
// Update and Delete call every registered handler at once, in the calling
// goroutine, in registration order. It is synced after SetSynced(true).
// It is safe for concurrent use; events sent from several goroutines are
// delivered concurrently.
type FakeInformer[T any] struct {
	synced atomic.Bool

	mu       sync.Mutex
	handlers []*Registration[T]
	changed  chan struct{} // closed and replaced when handlers change; nil until needed
}

// Registration is the handle FakeInformer.AddEventHandler returns.
type Registration[T any] struct {
	informer *FakeInformer[T]
	handler  reflector.ResourceEventHandler[T]
}

// HasSynced implements reflector.ResourceEventHandlerRegistration: the
// fake delivers nothing asynchronously, so a handler is synced when the
// informer is.
func (r *Registration[T]) HasSynced() bool { return r.informer.HasSynced() }

// AddEventHandler implements controller.Informer.
func (f *FakeInformer[T]) AddEventHandler(h reflector.ResourceEventHandler[T]) (reflector.ResourceEventHandlerRegistration, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r := &Registration[T]{informer: f, handler: h}
	f.handlers = append(f.handlers, r)
	f.notifyLocked()
	return r, nil
}

// RemoveEventHandler removes a handler added by AddEventHandler.
func (f *FakeInformer[T]) RemoveEventHandler(reg reflector.ResourceEventHandlerRegistration) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, r := range f.handlers {
		if r == reg {
			f.handlers = append(f.handlers[:i:i], f.handlers[i+1:]...)
			f.notifyLocked()
			return nil
		}
	}
	return ErrUnknownRegistration
}

// HasSynced implements controller.Informer.
func (f *FakeInformer[T]) HasSynced() bool { return f.synced.Load() }

// SetSynced sets what HasSynced reports.
func (f *FakeInformer[T]) SetSynced(synced bool) { f.synced.Store(synced) }

// Handlers returns the number of registered handlers.
func (f *FakeInformer[T]) Handlers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.handlers)
}

// WaitForHandlers blocks until exactly n handlers are registered, or ctx
// ends (then it returns ctx's error). Use it to send events only once a
// controller started in another goroutine is listening.
func (f *FakeInformer[T]) WaitForHandlers(ctx context.Context, n int) error {
	for {
		f.mu.Lock()
		if len(f.handlers) == n {
			f.mu.Unlock()
			return nil
		}
		if f.changed == nil {
			f.changed = make(chan struct{})
		}
		changed := f.changed
		f.mu.Unlock()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-changed:
		}
	}
}

func (f *FakeInformer[T]) notifyLocked() {
	if f.changed != nil {
		close(f.changed)
		f.changed = nil
	}
}

// Add delivers OnAdd(obj, isInInitialList) to every handler.
func (f *FakeInformer[T]) Add(obj T, isInInitialList bool) {
	for _, h := range f.snapshot() {
		h.OnAdd(obj, isInInitialList)
	}
}

// Update delivers OnUpdate(oldObj, newObj) to every handler.
func (f *FakeInformer[T]) Update(oldObj, newObj T) {
	for _, h := range f.snapshot() {
		h.OnUpdate(oldObj, newObj)
	}
}

// Delete delivers OnDelete(obj, finalStateUnknown) to every handler.
func (f *FakeInformer[T]) Delete(obj T, finalStateUnknown bool) {
	for _, h := range f.snapshot() {
		h.OnDelete(obj, finalStateUnknown)
	}
}

func (f *FakeInformer[T]) snapshot() []reflector.ResourceEventHandler[T] {
	f.mu.Lock()
	defer f.mu.Unlock()
	hs := make([]reflector.ResourceEventHandler[T], len(f.handlers))
	for i, r := range f.handlers {
		hs[i] = r.handler
	}
	return hs
}
