package reflector

import (
	"errors"
	"fmt"
	"sync"
)

// ErrFIFOClosed is returned by Pop once the FIFO is closed.
var ErrFIFOClosed = errors.New("reflector: DeltaFIFO closed")

// KnownObjects is the view of the downstream store a DeltaFIFO consults to
// find deletions (Delete, Replace) and objects to resync. The informer's
// Indexer satisfies it.
type KnownObjects[T any] interface {
	GetByKey(key string) (T, bool)
	ListKeys() []string
}

// TransformFunc rewrites an object before it is queued (for example to drop
// fields the program does not need). It must be idempotent: an object may
// pass through it more than once.
type TransformFunc[T any] func(obj T) (T, error)

// PopProcessFunc processes the deltas of one key. isInInitialList is true
// while the items of the first Replace are being drained.
type PopProcessFunc[T any] func(key string, deltas Deltas[T], isInInitialList bool) error

// DeltaFIFOOptions configure a DeltaFIFO.
type DeltaFIFOOptions[T any] struct {
	// KeyFunc keys objects; nil means MetaNamespaceKeyFunc.
	KeyFunc KeyFunc[T]
	// KnownObjects is the downstream store; nil means only queued keys are
	// known (deletions of unqueued keys are then dropped).
	KnownObjects KnownObjects[T]
	// Transform, when set, is applied to every object added.
	Transform TransformFunc[T]
}

// DeltaFIFO is a queue of keys, each with the list of its pending Deltas.
// A key is queued once however many deltas it accumulates, and keys leave
// in the order they were first queued.
//
// Pop runs the process function with the FIFO lock held, so that Replace,
// Delete and Resync, which consult KnownObjects, never see a key that has
// left the queue but is not yet in the store. Keep processing short: the
// informer only updates its store and hands notifications to buffers.
type DeltaFIFO[T Object] struct {
	keyFunc   KeyFunc[T]
	known     KnownObjects[T]
	transform TransformFunc[T]

	mu   sync.Mutex
	cond sync.Cond // signalled when a key is queued or the FIFO closes
	// items holds the pending deltas of every queued key; a key is in
	// items iff it is in queue.
	items map[string]Deltas[T]
	queue []string
	// populated is set by the first Replace or the first Add/Update/Delete.
	populated bool
	// initialPopulationCount counts the keys of the first Replace that are
	// not yet popped and processed.
	initialPopulationCount int
	synced                 chan struct{} // closed once HasSynced is true
	closed                 bool
}

// NewDeltaFIFO returns an empty DeltaFIFO.
func NewDeltaFIFO[T Object](opts DeltaFIFOOptions[T]) *DeltaFIFO[T] {
	f := &DeltaFIFO[T]{
		keyFunc:   opts.KeyFunc,
		known:     opts.KnownObjects,
		transform: opts.Transform,
		items:     map[string]Deltas[T]{},
		synced:    make(chan struct{}),
	}
	if f.keyFunc == nil {
		f.keyFunc = MetaNamespaceKeyFunc[T]
	}
	f.cond.L = &f.mu
	return f
}

// Transformer returns the FIFO's transform (nil if none). The reflector
// applies it to the objects it buffers during a watch-list, so that the
// temporary store holds transformed (usually smaller) objects.
func (f *DeltaFIFO[T]) Transformer() TransformFunc[T] { return f.transform }

// Add queues an Added delta.
func (f *DeltaFIFO[T]) Add(obj T) error { return f.queueAction(Added, obj) }

// Update queues an Updated delta.
func (f *DeltaFIFO[T]) Update(obj T) error { return f.queueAction(Updated, obj) }

// Delete queues a Deleted delta, unless the key is neither queued nor known
// (a relist already removed it).
func (f *DeltaFIFO[T]) Delete(obj T) error {
	key, err := f.keyFunc(obj)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.populated = true
	if _, queued := f.items[key]; !queued {
		if f.known == nil {
			return nil
		}
		if _, ok := f.known.GetByKey(key); !ok {
			return nil
		}
	}
	return f.queueLocked(key, Delta[T]{Type: Deleted, Object: obj})
}

func (f *DeltaFIFO[T]) queueAction(t DeltaType, obj T) error {
	key, err := f.keyFunc(obj)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.populated = true
	return f.queueLocked(key, Delta[T]{Type: t, Object: obj})
}

// queueLocked appends d to key's deltas, queuing the key if needed.
func (f *DeltaFIFO[T]) queueLocked(key string, d Delta[T]) error {
	if f.closed {
		return ErrFIFOClosed
	}
	if f.transform != nil && d.Type != Deleted {
		obj, err := f.transform(d.Object)
		if err != nil {
			return fmt.Errorf("transforming %q: %w", key, err)
		}
		d.Object = obj
	}
	old, queued := f.items[key]
	deltas := dedupDeltas(append(old, d))
	f.items[key] = deltas
	if !queued {
		f.queue = append(f.queue, key)
		f.cond.Signal()
	}
	return nil
}

// Replace queues a Replaced delta for every object of list, and a Deleted
// FinalStateUnknown delta for every key that is queued or known but absent
// from list. The first Replace defines the initial population.
func (f *DeltaFIFO[T]) Replace(list []T, _ string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	listed := make(map[string]struct{}, len(list))
	for _, obj := range list {
		key, err := f.keyFunc(obj)
		if err != nil {
			return err
		}
		listed[key] = struct{}{}
		if err := f.queueLocked(key, Delta[T]{Type: Replaced, Object: obj}); err != nil {
			return err
		}
	}
	if err := f.tombstoneQueuedLocked(listed); err != nil {
		return err
	}
	if err := f.tombstoneKnownLocked(listed); err != nil {
		return err
	}
	if !f.populated {
		f.populated = true
		f.initialPopulationCount = len(f.queue)
		f.maybeSyncedLocked()
	}
	return nil
}

// tombstoneQueuedLocked deletes queued keys missing from listed, with their
// newest queued state as the final state.
func (f *DeltaFIFO[T]) tombstoneQueuedLocked(listed map[string]struct{}) error {
	for key, deltas := range f.items {
		if _, ok := listed[key]; ok {
			continue
		}
		newest, _ := deltas.Newest()
		if newest.Type == Deleted {
			continue // already on its way out
		}
		d := Delta[T]{Type: Deleted, Object: newest.Object, FinalStateUnknown: true}
		if err := f.queueLocked(key, d); err != nil {
			return err
		}
	}
	return nil
}

// tombstoneKnownLocked deletes known keys that are neither listed nor queued.
func (f *DeltaFIFO[T]) tombstoneKnownLocked(listed map[string]struct{}) error {
	if f.known == nil {
		return nil
	}
	for _, key := range f.known.ListKeys() {
		if _, ok := listed[key]; ok {
			continue
		}
		if _, queued := f.items[key]; queued {
			continue // handled by tombstoneQueuedLocked
		}
		obj, ok := f.known.GetByKey(key)
		if !ok {
			continue
		}
		d := Delta[T]{Type: Deleted, Object: obj, FinalStateUnknown: true}
		if err := f.queueLocked(key, d); err != nil {
			return err
		}
	}
	return nil
}

// Resync queues a Sync delta for every known key that has no pending
// deltas: a queued key already carries a state at least as new as the
// store's, which a resync must not overtake.
func (f *DeltaFIFO[T]) Resync() error {
	if f.known == nil {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, key := range f.known.ListKeys() {
		if _, queued := f.items[key]; queued {
			continue
		}
		obj, ok := f.known.GetByKey(key)
		if !ok {
			continue
		}
		if err := f.queueLocked(key, Delta[T]{Type: Sync, Object: obj}); err != nil {
			return err
		}
	}
	return nil
}

// Pop waits for a queued key, removes it and calls process with its deltas
// while holding the FIFO lock. It returns process's error, or ErrFIFOClosed
// once Close was called (pending keys are then abandoned).
func (f *DeltaFIFO[T]) Pop(process PopProcessFunc[T]) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for len(f.queue) == 0 && !f.closed {
		f.cond.Wait()
	}
	if f.closed {
		return ErrFIFOClosed
	}
	key := f.queue[0]
	f.queue[0] = ""
	f.queue = f.queue[1:]
	deltas := f.items[key]
	delete(f.items, key)
	initial := f.initialPopulationCount > 0
	err := process(key, deltas, initial)
	if initial {
		f.initialPopulationCount--
		f.maybeSyncedLocked()
	}
	return err
}

func (f *DeltaFIFO[T]) maybeSyncedLocked() {
	if f.populated && f.initialPopulationCount == 0 {
		select {
		case <-f.synced:
		default:
			close(f.synced)
		}
	}
}

// HasSynced reports whether the first Replace (or first Add/Update/Delete)
// happened and every key it queued has been popped and processed.
func (f *DeltaFIFO[T]) HasSynced() bool {
	select {
	case <-f.synced:
		return true
	default:
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.maybeSyncedLocked()
	select {
	case <-f.synced:
		return true
	default:
		return false
	}
}

// Synced returns a channel closed once HasSynced is true.
func (f *DeltaFIFO[T]) Synced() <-chan struct{} { return f.synced }

// Len returns the number of queued keys.
func (f *DeltaFIFO[T]) Len() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.queue)
}

// idle reports whether the FIFO is empty and no Pop is processing a key;
// it does not wait: ok is false while a Pop holds the FIFO (processing).
func (f *DeltaFIFO[T]) idle() (empty, ok bool) {
	if !f.mu.TryLock() {
		return false, false
	}
	defer f.mu.Unlock()
	return len(f.queue) == 0, true
}

// Deltas returns a copy of key's pending deltas.
func (f *DeltaFIFO[T]) Deltas(key string) (Deltas[T], bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d, ok := f.items[key]
	return append(Deltas[T](nil), d...), ok
}

// Close wakes Pop, which returns ErrFIFOClosed from then on; later adds
// fail with ErrFIFOClosed. It is safe to call more than once.
func (f *DeltaFIFO[T]) Close() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	f.cond.Broadcast()
}
