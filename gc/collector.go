package gc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/listwatch/cache"
	"github.com/listwatch/listwatch/client"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/reflector/controller"
)

// DefaultWorkers is each kind's number of concurrent Reconciles when
// Config.Workers is 0.
const DefaultWorkers = 5

// ownerUIDIndex indexes each kind's informer by the UIDs of the objects'
// owners.
const ownerUIDIndex = "gc-owner-uid"

// Config configures a Collector.
type Config struct {
	// Client deletes and patches objects, and looks owners up live
	// (client.FromStorage). Required.
	Client client.Client
	// Cache provides one informer per kind. Required.
	Cache *cache.Cache
	// Kinds are the kinds collected, and the kinds whose owners can be
	// looked up; an owner of any other kind is taken as present.
	Kinds []client.Kind
	// Workers is each kind's number of concurrent Reconciles; 0 means
	// DefaultWorkers.
	Workers int
	// Logger receives the collector's logs; nil means slog.Default().
	Logger *slog.Logger
	// Registerer receives the controllers' reconcile and work-queue
	// metrics (see controller.Options.Registerer). Nil records none.
	Registerer prometheus.Registerer
}

// Collector is the garbage collector. Create it with New; run it with
// Start.
type Collector struct {
	c           client.Client
	log         *slog.Logger
	nodes       []*node
	controllers []*controller.Controller
}

// node is one kind the collector serves.
type node struct {
	kind client.Kind
	inf  *cache.Informer
}

// New gets the informer of each kind from cfg.Cache (making it if
// needed), indexes it by owner UID, and builds the controllers. It starts
// nothing.
func New(cfg Config) (*Collector, error) {
	if cfg.Client == nil || cfg.Cache == nil {
		return nil, errors.New("gc: Config.Client and Config.Cache are required")
	}
	if cfg.Workers < 0 {
		return nil, fmt.Errorf("gc: Workers %d is negative", cfg.Workers)
	}
	if cfg.Workers == 0 {
		cfg.Workers = DefaultWorkers
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	g := &Collector{c: cfg.Client, log: cfg.Logger.With("component", "garbage-collector")}
	for _, kind := range cfg.Kinds {
		inf, err := cfg.Cache.InformerForKind(kind)
		if err != nil {
			return nil, fmt.Errorf("gc: %w", err)
		}
		err = inf.AddIndexers(reflector.Indexers[client.Object]{ownerUIDIndex: ownerUIDs})
		if err != nil && !errors.Is(err, reflector.ErrIndexExists) {
			return nil, fmt.Errorf("gc: indexing %s: %w", kind.GroupVersionKind.Kind, err)
		}
		g.nodes = append(g.nodes, &node{kind: kind, inf: inf})
	}
	for _, n := range g.nodes {
		ctrl, err := controller.New(controller.Options{
			Name:                    "garbagecollector-" + n.kind.GroupVersionResource().GroupResource().String(),
			Reconciler:              g.reconciler(n),
			MaxConcurrentReconciles: cfg.Workers,
			Logger:                  cfg.Logger,
			Registerer:              cfg.Registerer,
		})
		if err != nil {
			return nil, fmt.Errorf("gc: %w", err)
		}
		if err := ctrl.Watch(controller.Kind[client.Object](n.inf, nil, concerned())); err != nil {
			return nil, fmt.Errorf("gc: %w", err)
		}
		for _, other := range g.nodes {
			if err := ctrl.Watch(controller.Kind[client.Object](other.inf, g.relatives(n))); err != nil {
				return nil, fmt.Errorf("gc: %w", err)
			}
		}
		g.controllers = append(g.controllers, ctrl)
	}
	return g, nil
}

// Start runs the collector's controllers until ctx ends, and returns once
// they have all returned: nil, or their errors.
func (g *Collector) Start(ctx context.Context) error {
	g.log.Info("starting", "kinds", len(g.nodes))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, ctrl := range g.controllers {
		wg.Go(func() {
			if err := ctrl.Start(ctx); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
				cancel() // one kind failing stops the collector
			}
		})
	}
	wg.Wait()
	g.log.Info("stopped")
	return errors.Join(errs...)
}

// NeedLeaderElection says the collector runs on the leader only.
func (g *Collector) NeedLeaderElection() bool { return true }

// Name names the collector in the manager's logs.
func (g *Collector) Name() string { return "garbage-collector" }

// nodeFor returns the node of the kind gk, or nil.
func (g *Collector) nodeFor(gk schema.GroupKind) *node {
	for _, n := range g.nodes {
		if n.kind.GroupVersionKind.GroupKind() == gk {
			return n
		}
	}
	return nil
}

// newObject returns an empty object of kind.
func newObject(kind client.Kind) client.Object {
	if kind.New != nil {
		return kind.New()
	}
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(kind.GroupVersionKind)
	return u
}

// newList returns an empty list of kind.
func newList(kind client.Kind) client.ObjectList {
	if kind.NewList != nil {
		return kind.NewList()
	}
	u := &unstructured.UnstructuredList{}
	u.SetGroupVersionKind(kind.GroupVersionKind.GroupVersion().WithKind(kind.GroupVersionKind.Kind + "List"))
	return u
}

// ownerUIDs indexes obj by the UIDs of its owners.
func ownerUIDs(obj client.Object) ([]string, error) {
	refs := obj.GetOwnerReferences()
	out := make([]string, 0, len(refs))
	for _, r := range refs {
		out = append(out, string(r.UID))
	}
	return out, nil
}

// dependents returns the cached objects of every kind that refer to the
// owner with uid. They are the informers' own: read-only.
func (g *Collector) dependents(uid string) []client.Object {
	var out []client.Object
	for _, n := range g.nodes {
		objs, _ := n.inf.GetIndexer().ByIndex(ownerUIDIndex, uid)
		out = append(out, objs...)
	}
	return out
}
