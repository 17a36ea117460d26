package builder

import (
	"errors"
	"fmt"
	"strings"

	"github.com/listwatch/listwatch/client"
	"github.com/listwatch/listwatch/manager"
	"github.com/listwatch/listwatch/reflector/controller"
)

// ErrNoFor is returned by Complete and Build when For was not called, or
// was called twice.
var ErrNoFor = errors.New("builder: For must be called exactly once")

// Predicate filters the events of a builder's sources.
type Predicate = controller.Predicate[client.Object]

// EventHandler turns the events of a Watches source into Requests.
type EventHandler = controller.EventHandler[client.Object]

// Option configures one source (For, Owns, Watches).
type Option func(*source)

// WithPredicates filters that source's events: an event is handled only
// when every predicate passes it.
func WithPredicates(ps ...Predicate) Option {
	return func(s *source) { s.predicates = append(s.predicates, ps...) }
}

// source is one For, Owns or Watches.
type source struct {
	obj        client.Object
	handler    EventHandler // nil: decided by Build (For, Owns)
	owns       bool
	predicates []Predicate
}

// Builder builds a controller; create it with ControllerManagedBy.
type Builder struct {
	mgr     *manager.Manager
	fors    []source
	others  []source
	filters []Predicate
	opts    controller.Options
	name    string
}

// ControllerManagedBy returns a Builder of a controller that mgr runs.
func ControllerManagedBy(mgr *manager.Manager) *Builder {
	return &Builder{mgr: mgr}
}

// For sets the kind the controller reconciles: each event of an object of
// obj's kind enqueues that object's Request.
func (b *Builder) For(obj client.Object, opts ...Option) *Builder {
	b.fors = append(b.fors, newSource(obj, nil, false, opts))
	return b
}

// Owns reconciles the controller owner (of For's kind) of each object of
// obj's kind that changes: the ownerReference with controller=true (see
// client.SetControllerReference).
func (b *Builder) Owns(obj client.Object, opts ...Option) *Builder {
	b.others = append(b.others, newSource(obj, nil, true, opts))
	return b
}

// Watches gives the events of obj's kind to handler, such as
// controller.EnqueueRequestsFromMapFunc(fn) to map an object to the
// Requests it concerns.
func (b *Builder) Watches(obj client.Object, handler EventHandler, opts ...Option) *Builder {
	b.others = append(b.others, newSource(obj, handler, false, opts))
	return b
}

// WithEventFilter adds a predicate to every source.
func (b *Builder) WithEventFilter(p Predicate) *Builder {
	b.filters = append(b.filters, p)
	return b
}

// WithOptions sets the controller's options (MaxConcurrentReconciles,
// RateLimiter, CacheSyncTimeout, RecoverPanic, ...). Name, Reconciler,
// Logger and Registerer default to the builder's name, Complete's
// reconciler and the manager's logger and Registerer.
func (b *Builder) WithOptions(o controller.Options) *Builder {
	b.opts = o
	return b
}

// Named names the controller (in logs and metrics). The default is the
// lower-case kind of For, such as "widget".
func (b *Builder) Named(name string) *Builder {
	b.name = name
	return b
}

// Complete builds the controller with r and adds it to the manager.
func (b *Builder) Complete(r controller.Reconciler) error {
	_, err := b.Build(r)
	return err
}

// Build builds the controller with r, adds it to the manager and returns
// it.
func (b *Builder) Build(r controller.Reconciler) (*controller.Controller, error) {
	if len(b.fors) != 1 {
		return nil, ErrNoFor
	}
	kinds := b.mgr.GetKinds()
	forKind, err := kinds.KindFor(b.fors[0].obj)
	if err != nil {
		return nil, fmt.Errorf("builder: For: %w", err)
	}
	opts := b.opts
	opts.Reconciler = r
	if opts.Name == "" {
		opts.Name = b.name
	}
	if opts.Name == "" {
		opts.Name = strings.ToLower(forKind.GroupVersionKind.Kind)
	}
	if opts.Logger == nil {
		opts.Logger = b.mgr.GetLogger()
	}
	if opts.Registerer == nil {
		opts.Registerer = b.mgr.GetRegisterer()
	}
	c, err := controller.New(opts)
	if err != nil {
		return nil, err
	}
	owner := controller.EnqueueRequestForOwner[client.Object](forKind.GroupVersionKind.GroupKind(), forKind.Namespaced)
	for _, s := range append(b.fors, b.others...) {
		handler := s.handler
		if s.owns {
			handler = owner
		}
		inf, err := b.mgr.GetCache().InformerFor(s.obj)
		if err != nil {
			return nil, fmt.Errorf("builder: controller %q: %w", opts.Name, err)
		}
		preds := append(append([]Predicate(nil), b.filters...), s.predicates...)
		if err := c.Watch(controller.Kind(inf, handler, preds...)); err != nil {
			return nil, err
		}
	}
	if err := b.mgr.Add(c); err != nil {
		return nil, fmt.Errorf("builder: controller %q: %w", opts.Name, err)
	}
	return c, nil
}

func newSource(obj client.Object, h EventHandler, owns bool, opts []Option) source {
	s := source{obj: obj, handler: h, owns: owns}
	for _, o := range opts {
		o(&s)
	}
	return s
}
