package cache

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/listwatch/client"
	"github.com/listwatch/listwatch/reflector"
)

// ErrNotStarted is returned by Get and List before Start.
var ErrNotStarted = errors.New("cache: not started")

// ErrStopped is returned by Get and List after Shutdown: the informers no
// longer follow the storage, so what they hold may be stale.
var ErrStopped = errors.New("cache: stopped")

// Informer is the shared informer of one kind, holding client.Objects of
// that kind's Go type.
type Informer = reflector.SharedIndexInformer[client.Object]

// Options configures a Cache.
type Options struct {
	// Kinds resolves objects to kinds. Required.
	Kinds *client.Kinds
	// ListerWatcher returns the ListerWatcher of a kind, over all
	// namespaces (reflector.NewStorageListerWatcher in process, httplw
	// over HTTP). Required.
	ListerWatcher func(client.Kind) (reflector.ListerWatcher, error)
	// Logger receives the informers' logs; nil means slog.Default().
	Logger *slog.Logger
	// InformerOptions are given to every informer (resync, page size,
	// watch-list, ...).
	InformerOptions []reflector.InformerOption
}

// Cache is a set of informers, one per kind, and a client.Reader over
// them. Create it with New; the zero value is not usable.
type Cache struct {
	opts    Options
	factory *reflector.InformerFactory

	mu        sync.Mutex
	informers map[schema.GroupVersionKind]*Informer
	sources   map[schema.GroupVersionKind]source // where each informer lists and watches
	ctx       context.Context                    // Start's, once started
	stopped   bool                               // Shutdown was called
}

// source is what an informer of the cache lists and watches.
type source struct {
	resource string // "widgets.v1.demo.listwatch.dev"
	lw       reflector.ListerWatcher
}

var _ client.Cache = (*Cache)(nil)

// New returns a Cache; it runs nothing until Start.
func New(opts Options) (*Cache, error) {
	if opts.Kinds == nil || opts.ListerWatcher == nil {
		return nil, errors.New("cache: Options.Kinds and Options.ListerWatcher are required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	informerOpts := append([]reflector.InformerOption{reflector.WithLogger(opts.Logger)}, opts.InformerOptions...)
	return &Cache{
		opts:      opts,
		factory:   reflector.NewInformerFactory(informerOpts...),
		informers: map[schema.GroupVersionKind]*Informer{},
		sources:   map[schema.GroupVersionKind]source{},
	}, nil
}

// Kinds returns the cache's kinds.
func (c *Cache) Kinds() *client.Kinds { return c.opts.Kinds }

// InformerFor returns the informer of obj's kind (obj may be an object or
// a list), making it on first use; on a started cache a new informer
// starts at once.
func (c *Cache) InformerFor(obj client.ObjectList) (*Informer, error) {
	kind, err := c.opts.Kinds.KindFor(obj)
	if err != nil {
		return nil, err
	}
	return c.InformerForKind(kind)
}

// InformerForKind returns the informer of kind, making it on first use.
func (c *Cache) InformerForKind(kind client.Kind) (*Informer, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if inf, ok := c.informers[kind.GroupVersionKind]; ok {
		return inf, nil
	}
	lw, err := c.opts.ListerWatcher(kind)
	if err != nil {
		return nil, fmt.Errorf("cache: ListerWatcher of %s: %w", kind.GroupVersionKind.Kind, err)
	}
	inf, err := reflector.InformerFor[client.Object](c.factory, kind.GroupVersionResource(), lw)
	if err != nil {
		return nil, err
	}
	c.informers[kind.GroupVersionKind] = inf
	res := kind.GroupVersionResource()
	c.sources[kind.GroupVersionKind] = source{resource: resourceName(res.Resource, res.Version, res.Group), lw: lw}
	if c.ctx != nil {
		c.factory.Start(c.ctx)
	}
	return inf, nil
}

// Serves reports whether the cache has an informer of kind.
func (c *Cache) Serves(kind client.Kind) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.informers[kind.GroupVersionKind]
	return ok
}

// Start runs every informer, and those made later, until ctx ends or
// Shutdown. It does not block.
func (c *Cache) Start(ctx context.Context) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ctx = ctx
	c.factory.Start(ctx)
}

// WaitForCacheSync waits until every informer the cache made has synced
// (Unsynced is empty) or ctx ends, and reports whether all have.
func (c *Cache) WaitForCacheSync(ctx context.Context) bool {
	return reflector.WaitForCacheSync(ctx, func() bool { return len(c.Unsynced()) == 0 })
}

// Unsynced returns the resources whose informers have not synced yet,
// sorted ("widgets.v1.demo.listwatch.dev"): every informer the cache has
// made counts, started or not (before Start none has synced).
func (c *Cache) Unsynced() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for gvk, inf := range c.informers {
		if !inf.HasSynced() {
			out = append(out, c.sources[gvk].resource)
		}
	}
	sort.Strings(out)
	return out
}

// Shutdown stops every informer and waits for their goroutines.
func (c *Cache) Shutdown() {
	c.mu.Lock()
	c.stopped = true
	c.mu.Unlock()
	c.factory.Shutdown()
}
