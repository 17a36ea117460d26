package reflector

import (
	"errors"
	"fmt"
	"time"
)

// ErrUnknownRegistration is returned by RemoveEventHandler for a handle
// that is not (or no longer) registered with this informer.
var ErrUnknownRegistration = errors.New("reflector: handler registration unknown to this informer")

// HandlerRegistration is the handle AddEventHandler returns; it implements
// ResourceEventHandlerRegistration.
type HandlerRegistration[T Object] struct {
	informer *SharedIndexInformer[T]
	l        *listener[T]
}

// HasSynced reports whether the informer has synced and this handler has
// been delivered every object of the initial list (or of its replay).
func (r *HandlerRegistration[T]) HasSynced() bool {
	return r.informer.HasSynced() && r.l.initialPending.Load() == 0
}

// Pending returns the number of notifications queued for this handler and
// not yet handled: a growing value means a slow handler.
func (r *HandlerRegistration[T]) Pending() int64 { return r.l.pending.Load() }

// AddEventHandler registers h with the informer's default resync period.
func (s *SharedIndexInformer[T]) AddEventHandler(h ResourceEventHandler[T]) (ResourceEventHandlerRegistration, error) {
	return s.AddEventHandlerWithResyncPeriod(h, s.opts.resync)
}

// AddEventHandlerWithResyncPeriod registers h; with resync > 0 it also
// gets OnUpdate(obj, obj) for every stored object about that often. After
// Run started, a period shorter than the informer's resync check period is
// raised to it (and without a check period there is no resync). A handler
// added to a running informer is first replayed the store as
// OnAdd(obj, true).
func (s *SharedIndexInformer[T]) AddEventHandlerWithResyncPeriod(h ResourceEventHandler[T], resync time.Duration) (ResourceEventHandlerRegistration, error) {
	if h == nil || isNil(h) {
		return nil, errors.New("reflector: nil handler")
	}
	if resync < 0 {
		return nil, fmt.Errorf("reflector: negative resync period %v", resync)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return nil, ErrInformerStopped
	}
	if resync > 0 {
		if !s.started && (s.resyncCheckPeriod == 0 || resync < s.resyncCheckPeriod) {
			s.resyncCheckPeriod = resync
		}
		if s.started && resync < s.resyncCheckPeriod {
			resync = s.resyncCheckPeriod
		}
	}
	l := newListener(h, resync, s.reportPanic)
	reg := &HandlerRegistration[T]{informer: s, l: l}
	if !s.started {
		s.proc.addListener(l)
		return reg, nil
	}
	// Running: block delta processing so that the replay is exactly the
	// store's content and the first live delta comes after it.
	s.blockDeltas.Lock()
	defer s.blockDeltas.Unlock()
	if !s.proc.addListener(l) {
		return nil, ErrInformerStopped
	}
	for _, obj := range s.indexer.List() {
		l.add(notification[T]{kind: addNotification, newObj: obj, initial: true})
	}
	return reg, nil
}

// RemoveEventHandler unregisters a handler: it receives nothing more after
// RemoveEventHandler returns, except for a call already in progress. It
// must not be called from inside a handler.
func (s *SharedIndexInformer[T]) RemoveEventHandler(reg ResourceEventHandlerRegistration) error {
	r, ok := reg.(*HandlerRegistration[T])
	if !ok || r == nil || r.informer != s {
		return ErrUnknownRegistration
	}
	s.blockDeltas.Lock()
	defer s.blockDeltas.Unlock()
	if !s.proc.removeListener(r.l) {
		return ErrUnknownRegistration
	}
	return nil
}

func (s *SharedIndexInformer[T]) reportPanic(recovered any) {
	if s.opts.onPanic != nil {
		s.opts.onPanic(recovered)
		return
	}
	s.log.Error("event handler panicked", "panic", recovered)
}
