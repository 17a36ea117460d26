package reflector

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// ErrInformerTypeMismatch is returned by InformerFor when the resource
// already has an informer of another object type.
var ErrInformerTypeMismatch = errors.New("reflector: resource already has an informer of another type")

// ErrFactoryShutDown is returned by InformerFor after Shutdown.
var ErrFactoryShutDown = errors.New("reflector: informer factory shut down")

// runnableInformer is the type-erased view the factory keeps.
type runnableInformer interface {
	Run(ctx context.Context) error
	HasSynced() bool
}

// InformerFactory hands out one shared informer per resource and runs
// them together. The zero value is not usable; call NewInformerFactory.
type InformerFactory struct {
	opts []InformerOption

	mu        sync.Mutex
	informers map[schema.GroupVersionResource]runnableInformer
	started   map[schema.GroupVersionResource]bool
	cancels   []context.CancelFunc
	shutdown  bool
	wg        sync.WaitGroup // one per running informer
}

// NewInformerFactory returns a factory whose informers get opts.
func NewInformerFactory(opts ...InformerOption) *InformerFactory {
	return &InformerFactory{
		opts:      opts,
		informers: map[schema.GroupVersionResource]runnableInformer{},
		started:   map[schema.GroupVersionResource]bool{},
	}
}

// InformerFor returns the factory's informer for res, creating it over lw
// on first use (lw is ignored afterwards). It fails with
// ErrInformerTypeMismatch when res has an informer of another type.
func InformerFor[T Object](f *InformerFactory, res schema.GroupVersionResource, lw ListerWatcher, opts ...InformerOption) (*SharedIndexInformer[T], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.shutdown {
		return nil, ErrFactoryShutDown
	}
	if existing, ok := f.informers[res]; ok {
		inf, ok := existing.(*SharedIndexInformer[T])
		if !ok {
			return nil, fmt.Errorf("%w: %s is %T", ErrInformerTypeMismatch, res, existing)
		}
		return inf, nil
	}
	all := append(append([]InformerOption{WithName(res.String())}, f.opts...), opts...)
	inf, err := newSharedIndexInformer[T](lw, all...)
	if err != nil {
		return nil, err
	}
	f.informers[res] = inf
	return inf, nil
}

// Start runs every informer not started yet, until ctx is done or
// Shutdown. It does not block; call it again after adding informers.
func (f *InformerFactory) Start(ctx context.Context) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.shutdown {
		return
	}
	for res, inf := range f.informers {
		if f.started[res] {
			continue
		}
		f.started[res] = true
		runCtx, cancel := context.WithCancel(ctx)
		f.cancels = append(f.cancels, cancel)
		f.wg.Go(func() { _ = inf.Run(runCtx) })
	}
}

// WaitForCacheSync waits until every started informer has synced or ctx
// is done, and reports each one's state.
func (f *InformerFactory) WaitForCacheSync(ctx context.Context) map[schema.GroupVersionResource]bool {
	f.mu.Lock()
	started := map[schema.GroupVersionResource]runnableInformer{}
	for res, inf := range f.informers {
		if f.started[res] {
			started[res] = inf
		}
	}
	f.mu.Unlock()
	out := make(map[schema.GroupVersionResource]bool, len(started))
	for res, inf := range started {
		out[res] = WaitForCacheSync(ctx, inf.HasSynced)
	}
	return out
}

// Shutdown stops every informer and waits until all their goroutines have
// ended. Later Start calls do nothing and InformerFor fails.
func (f *InformerFactory) Shutdown() {
	f.mu.Lock()
	f.shutdown = true
	cancels := f.cancels
	f.cancels = nil
	f.mu.Unlock()
	for _, c := range cancels {
		c()
	}
	f.wg.Wait()
}
