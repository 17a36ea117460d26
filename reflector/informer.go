package reflector

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// ErrInformerStarted is returned by calls only allowed before Run.
var ErrInformerStarted = errors.New("reflector: informer already started")

// ErrInformerStopped is returned by calls made after Run returned.
var ErrInformerStopped = errors.New("reflector: informer stopped")

// SharedIndexInformer keeps an indexed local copy of one resource and
// notifies any number of handlers of its changes.
//
// Contract:
//   - The store (GetIndexer) is updated before the handlers hear of a
//     change; objects in it and passed to handlers are shared, read-only.
//   - Each handler is called from its own goroutine, in order, through an
//     unbounded buffer: a slow handler delays only itself.
//   - Per key, a handler sees the changes in order; it may miss
//     intermediate states (deltas of one key are coalesced while queued)
//     but always ends with the latest state. A relist that finds an object
//     gone delivers OnDelete(lastKnown, true).
//   - A handler added while running first gets OnAdd(obj, true) for every
//     stored object, then the live changes, with nothing lost or repeated.
//   - Run blocks until ctx is done and every goroutine it started ended.
type SharedIndexInformer[T Object] struct {
	lw      ListerWatcher
	opts    informerOptions
	log     *slog.Logger
	indexer Indexer[T]
	proc    *processor[T]

	// blockDeltas is held while deltas are applied and distributed, and
	// while a late handler is given its replay: the replay then matches
	// the store exactly and the next delta follows it.
	blockDeltas sync.Mutex

	mu                sync.Mutex // guards the fields below
	started, stopped  bool
	transform         TransformFunc[T]
	resyncCheckPeriod time.Duration

	fifo      atomic.Pointer[DeltaFIFO[T]]
	reflector atomic.Pointer[Reflector[T]]

	storeRVMu sync.Mutex // serialises storeRV's updates, so it never goes back
	storeRV   string     // see StoreResourceVersion; guarded by storeRVMu
}

// newSharedIndexInformer returns an informer over lw with an Indexer that
// has NamespaceIndex. Informers are made in one place, so that each
// resource is listed and watched once: InformerFor on an InformerFactory
// (which a manager's cache, manager.Manager.GetCache, holds) calls it.
func newSharedIndexInformer[T Object](lw ListerWatcher, opts ...InformerOption) (*SharedIndexInformer[T], error) {
	if lw == nil || isNil(lw) {
		return nil, errors.New("reflector: ListerWatcher is required")
	}
	var o informerOptions
	for _, f := range opts {
		f(&o)
	}
	if o.resync < 0 {
		return nil, fmt.Errorf("reflector: negative resync period %v", o.resync)
	}
	log := o.logger
	if log == nil {
		log = slog.Default()
	}
	if o.name != "" {
		log = log.With("informer", o.name)
	}
	s := &SharedIndexInformer[T]{
		lw: lw, opts: o, log: log,
		indexer:           NewIndexer[T](nil, nil),
		proc:              newProcessor[T](),
		resyncCheckPeriod: o.resync,
	}
	return s, nil
}

// GetStore returns the informer's store.
func (s *SharedIndexInformer[T]) GetStore() Store[T] { return s.indexer }

// GetIndexer returns the informer's indexed store.
func (s *SharedIndexInformer[T]) GetIndexer() Indexer[T] { return s.indexer }

// AddIndexers adds indexes, indexing the objects already stored; it works
// before and after Run.
func (s *SharedIndexInformer[T]) AddIndexers(ix Indexers[T]) error { return s.indexer.AddIndexers(ix) }

// SetTransform sets a function applied to every object before it is
// stored. It must be called before Run (ErrInformerStarted after).
func (s *SharedIndexInformer[T]) SetTransform(f TransformFunc[T]) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return ErrInformerStarted
	}
	s.transform = f
	return nil
}

// HasSynced reports whether the initial list has been stored and handed
// to every handler registered at that time.
func (s *SharedIndexInformer[T]) HasSynced() bool {
	f := s.fifo.Load()
	return f != nil && f.HasSynced()
}

// LastSyncResourceVersion returns the RV of the last list or event the
// reflector saw ("" before Run).
func (s *SharedIndexInformer[T]) LastSyncResourceVersion() string {
	r := s.reflector.Load()
	if r == nil {
		return ""
	}
	return r.LastSyncResourceVersion()
}

// StoreResourceVersion returns the RV the store has caught up with: every
// list, event and bookmark the reflector received at or below it has been
// applied to the store (GetStore, GetIndexer), though not necessarily
// handed to every handler yet. "" before the first list was applied. It
// never goes back, and does not wait: while a change is being applied it
// returns the RV reached before it.
//
// A reader that must see every write up to a revision (a new leader, see
// package manager) waits until it is at least that revision;
// LastSyncResourceVersion is what the reflector received, possibly still
// queued.
func (s *SharedIndexInformer[T]) StoreResourceVersion() string {
	s.storeRVMu.Lock()
	defer s.storeRVMu.Unlock()
	r, f := s.reflector.Load(), s.fifo.Load()
	if r == nil || f == nil {
		return s.storeRV
	}
	// The reflector queues a change before it records its RV: once the
	// queue is seen empty after rv was read, everything up to rv is stored.
	rv := r.LastSyncResourceVersion()
	if empty, ok := f.idle(); ok && empty && rv != "" {
		s.storeRV = rv
	}
	return s.storeRV
}

// Relist makes the informer's reflector list again with a consistent read
// and watch from there (see Reflector.Relist); before Run it does nothing
// (Run lists anyway).
func (s *SharedIndexInformer[T]) Relist() {
	if r := s.reflector.Load(); r != nil {
		r.Relist()
	}
}

// IsStopped reports whether Run has returned.
func (s *SharedIndexInformer[T]) IsStopped() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopped
}

// Run lists, watches and dispatches until ctx is done. It returns
// ErrInformerStarted if called twice, and nil after a clean stop; it
// returns only once every goroutine it started (reflector, queue
// processing, handlers) has ended, so a handler that never returns keeps
// Run from returning.
func (s *SharedIndexInformer[T]) Run(ctx context.Context) error {
	fifo, refl, err := s.start()
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	wg.Go(func() { refl.Run(ctx) })
	wg.Go(func() { s.processLoop(fifo) })
	<-ctx.Done()
	fifo.Close()
	wg.Wait()

	s.mu.Lock()
	s.stopped = true
	s.mu.Unlock()
	s.proc.stop() // after the queue: nothing is distributed any more
	return nil
}

// start builds the queue and reflector and starts the handlers.
func (s *SharedIndexInformer[T]) start() (*DeltaFIFO[T], *Reflector[T], error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		return nil, nil, ErrInformerStarted
	}
	fifo := NewDeltaFIFO(DeltaFIFOOptions[T]{KnownObjects: s.indexer, Transform: s.transform})
	refl, err := NewReflector(ReflectorConfig[T]{
		Name:              s.opts.name,
		ListerWatcher:     s.lw,
		Store:             fifo,
		PageSize:          s.opts.pageSize,
		ResyncPeriod:      s.resyncCheckPeriod,
		ShouldResync:      s.proc.shouldResync,
		Backoff:           s.opts.backoff,
		MinWatchTimeout:   s.opts.minWatchTimeout,
		UseWatchList:      s.opts.useWatchList,
		WatchErrorHandler: s.opts.watchErrorHandler,
		Logger:            s.opts.logger,
	})
	if err != nil {
		return nil, nil, err
	}
	s.fifo.Store(fifo)
	s.reflector.Store(refl)
	s.started = true
	s.proc.start()
	return fifo, refl, nil
}

func (s *SharedIndexInformer[T]) processLoop(fifo *DeltaFIFO[T]) {
	for {
		err := fifo.Pop(s.handleDeltas)
		if errors.Is(err, ErrFIFOClosed) {
			return
		}
		// Note the store RV whenever the queue drains, so that it advances
		// under a steady stream of changes too, not only when a reader
		// happens to find the queue empty.
		s.StoreResourceVersion()
		if err != nil {
			s.log.Error("processing deltas", "err", err)
		}
	}
}

// handleDeltas applies one key's deltas to the store, then notifies.
func (s *SharedIndexInformer[T]) handleDeltas(key string, deltas Deltas[T], initial bool) error {
	s.blockDeltas.Lock()
	defer s.blockDeltas.Unlock()
	var errs []error
	for _, d := range deltas {
		if err := s.applyDelta(key, d, initial); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (s *SharedIndexInformer[T]) applyDelta(key string, d Delta[T], initial bool) error {
	if d.Type == Deleted {
		if err := s.indexer.Delete(d.Object); err != nil {
			return fmt.Errorf("deleting %q: %w", key, err)
		}
		s.proc.distribute(notification[T]{kind: deleteNotification, newObj: d.Object, unknown: d.FinalStateUnknown}, false)
		return nil
	}
	old, exists := s.indexer.GetByKey(key)
	if exists {
		if err := s.indexer.Update(d.Object); err != nil {
			return fmt.Errorf("updating %q: %w", key, err)
		}
		// A resync, or a relisted object that did not change, is a sync:
		// only handlers due for resync hear of it.
		sync := d.Type == Sync || old.GetResourceVersion() == d.Object.GetResourceVersion()
		s.proc.distribute(notification[T]{kind: updateNotification, oldObj: old, newObj: d.Object}, sync)
		return nil
	}
	if err := s.indexer.Add(d.Object); err != nil {
		return fmt.Errorf("adding %q: %w", key, err)
	}
	s.proc.distribute(notification[T]{kind: addNotification, newObj: d.Object, initial: initial}, false)
	return nil
}

// WaitForCacheSync polls the given HasSynced functions until all are true
// (true) or ctx is done (false).
func WaitForCacheSync(ctx context.Context, synced ...func() bool) bool {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		all := true
		for _, f := range synced {
			if !f() {
				all = false
				break
			}
		}
		if all {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
		}
	}
}
