package manager

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/client"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/reflector/httplw"
	"github.com/listwatch/listwatch/registry"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/storage/etcd3"
	"github.com/listwatch/listwatch/transport"
)

// ErrNoBackend is returned by the client and cache of a manager made
// without Options.Etcd or Options.ServerURL.
var ErrNoBackend = errors.New("manager: no Etcd and no ServerURL: objects cannot be read or written")

// backend is where a manager's objects live: what its client writes to
// and its cache's informers list and watch.
type backend interface {
	// client returns the uncached client.
	client() client.Client
	// listerWatcher returns kind's ListerWatcher over all namespaces.
	listerWatcher(kind client.Kind) (reflector.ListerWatcher, error)
	// start starts what the backend owns and waits until it serves reads,
	// or ctx ends; stop stops it and waits.
	start(ctx context.Context) error
	stop()
}

// noBackend fails every call with ErrNoBackend.
type noBackend struct{}

func (noBackend) client() client.Client { return nil }
func (noBackend) listerWatcher(client.Kind) (reflector.ListerWatcher, error) {
	return nil, ErrNoBackend
}
func (noBackend) start(context.Context) error { return nil }
func (noBackend) stop()                       {}

// httpBackend talks to a Kubernetes-compatible HTTP server.
type httpBackend struct {
	c       client.Client
	baseURL string
	httpc   *http.Client // its transport is a *transport.Transport, shared by c and every ListerWatcher
}

// newHTTPBackend makes the backend of opts.ServerURL: its client and
// ListerWatchers share one transport.Transport (opts.HTTPClient's, or one
// made from opts.QPS and opts.Burst over opts.HTTPClient's transport).
func newHTTPBackend(opts Options, kinds *client.Kinds, log *slog.Logger) (*httpBackend, error) {
	hc := opts.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	if _, ok := hc.Transport.(*transport.Transport); ok {
		if opts.QPS != 0 || opts.Burst != 0 {
			return nil, errors.New("QPS and Burst are set, and HTTPClient's transport is a *transport.Transport with its own limit")
		}
	} else {
		rt, err := transport.New(transport.Config{Base: hc.Transport, QPS: opts.QPS, Burst: opts.Burst, Logger: log,
			Registerer: opts.Registerer})
		if err != nil {
			return nil, err
		}
		c := *hc
		c.Transport = rt
		hc = &c
	}
	c, err := client.NewHTTP(client.HTTPConfig{BaseURL: opts.ServerURL, Kinds: kinds, HTTPClient: hc})
	if err != nil {
		return nil, err
	}
	return &httpBackend{c: c, baseURL: opts.ServerURL, httpc: hc}, nil
}

func (b *httpBackend) client() client.Client { return b.c }

func (b *httpBackend) listerWatcher(kind client.Kind) (reflector.ListerWatcher, error) {
	gv := kind.GroupVersionKind.GroupVersion()
	return httplw.New(httplw.Config{
		BaseURL: b.baseURL, Group: gv.Group, Version: gv.Version, Plural: kind.Resource,
		HTTPClient:  b.httpc,
		NewFunc:     func() runtime.Object { return kind.New() },
		NewListFunc: kind.NewList,
	})
}

func (b *httpBackend) start(context.Context) error { return nil }
func (b *httpBackend) stop()                       {}

// localBackend serves each kind in process: an etcd3 store, a cacher over
// it (the reads and watches) and a registry.Store over the cacher (the
// writes), made on first use, or the storage given for the kind (with a
// registry.Store over it); owned by the manager: started by Run, stopped
// and closed when Run returns.
type localBackend struct {
	etcd   *clientv3.Client // nil: only given storage
	prefix string
	given  map[schema.GroupVersionKind]storage.Interface
	log    *slog.Logger
	c      client.Client

	mu      sync.Mutex
	kinds   map[schema.GroupVersionKind]*localKind
	order   []*localKind    // in the order they were made
	runCtx  context.Context // set by start
	stopped bool
	wg      sync.WaitGroup // one per running cacher
	cancel  context.CancelFunc
}

// localKind is one kind's storage stack.
type localKind struct {
	name     string
	storage  storage.Interface // what reads, watches and the registry use
	registry *registry.Store
	run      func(ctx context.Context) error // runs a cacher until ctx ends; nil: nothing to run
	ready    func(ctx context.Context) error // waits until it serves reads; nil: at once
	close    func()                          // closes what was made or given; nil: nothing
}

// Run, WaitReady and Close are the methods of a given storage the manager
// uses (a *cacher.Cacher has the first two, an *etcd3.Store the last).
type (
	runner interface {
		Run(ctx context.Context) error
	}
	readyWaiter interface {
		WaitReady(ctx context.Context) error
	}
	closer interface{ Close() }
)

// givenKind returns the stack of a given storage.
func givenKind(name string, s storage.Interface) *localKind {
	lk := &localKind{name: name, storage: s}
	if r, ok := s.(runner); ok {
		lk.run = r.Run
	}
	if w, ok := s.(readyWaiter); ok {
		lk.ready = w.WaitReady
	}
	if c, ok := s.(closer); ok {
		lk.close = c.Close
	}
	return lk
}

func newLocalBackend(etcd *clientv3.Client, prefix string, given map[schema.GroupVersionKind]storage.Interface,
	kinds *client.Kinds, log *slog.Logger) (*localBackend, error) {
	b := &localBackend{etcd: etcd, prefix: prefix, given: given, log: log, kinds: map[schema.GroupVersionKind]*localKind{}}
	c, err := client.NewLocal(client.LocalConfig{Kinds: kinds, Store: func(k client.Kind) (*registry.Store, error) {
		lk, err := b.kind(k)
		if err != nil {
			return nil, err
		}
		return lk.registry, nil
	}})
	if err != nil {
		return nil, err
	}
	b.c = c
	return b, nil
}

func (b *localBackend) client() client.Client { return b.c }

func (b *localBackend) listerWatcher(kind client.Kind) (reflector.ListerWatcher, error) {
	lk, err := b.kind(kind)
	if err != nil {
		return nil, err
	}
	return reflector.NewStorageListerWatcher(lk.storage, kind.KeyRoot, kind.NewList, "",
		reflector.WithAttrFunc(kind.GetAttrs)), nil
}

// kind returns kind's storage stack, making it on first use (and running
// its cacher when the backend runs).
func (b *localBackend) kind(kind client.Kind) (*localKind, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if lk, ok := b.kinds[kind.GroupVersionKind]; ok {
		return lk, nil
	}
	if b.stopped {
		return nil, fmt.Errorf("manager: stopped: no storage for %s", kind.GroupVersionKind.Kind)
	}
	name := kind.GroupVersionResource().GroupResource().String()
	var lk *localKind
	if s, ok := b.given[kind.GroupVersionKind]; ok {
		lk = givenKind(name, s)
	} else {
		var err error
		if lk, err = b.makeKind(name, kind); err != nil {
			return nil, err
		}
	}
	reg, err := registry.New(registry.Config{Storage: lk.storage, Resource: kind.GroupVersionResource().GroupResource(),
		Kind: kind.GroupVersionKind.Kind})
	if err != nil {
		return nil, err
	}
	lk.registry = reg
	b.kinds[kind.GroupVersionKind] = lk
	b.order = append(b.order, lk)
	if b.runCtx != nil {
		b.run(lk)
	}
	return lk, nil
}

// makeKind makes kind's etcd3 store and cacher.
func (b *localBackend) makeKind(name string, kind client.Kind) (*localKind, error) {
	if b.etcd == nil {
		return nil, fmt.Errorf("%w: no Options.Storage for %s", ErrNoBackend, kind.GroupVersionKind)
	}
	newFunc := func() runtime.Object { return kind.New() }
	store, err := etcd3.New(etcd3.Config{Client: b.etcd, Codec: kind.Codec, NewFunc: newFunc,
		NewListFunc: kind.NewList, Prefix: b.prefix, ResourcePrefix: kind.KeyRoot, Logger: b.log})
	if err != nil {
		return nil, fmt.Errorf("manager: storage of %s: %w", kind.GroupVersionKind.Kind, err)
	}
	c, err := cacher.New(cacher.Config{Storage: store, ResourcePrefix: kind.KeyRoot, NewFunc: newFunc,
		NewListFunc: kind.NewList, GetAttrs: kind.GetAttrs, Logger: b.log})
	if err != nil {
		store.Close()
		return nil, fmt.Errorf("manager: cacher of %s: %w", kind.GroupVersionKind.Kind, err)
	}
	return &localKind{name: name, storage: c, run: c.Run, ready: c.WaitReady, close: store.Close}, nil
}

// run runs lk's cacher until the backend stops (b.mu held).
func (b *localBackend) run(lk *localKind) {
	if lk.run == nil {
		return
	}
	ctx := b.runCtx
	b.wg.Go(func() {
		if err := lk.run(ctx); err != nil {
			b.log.Error("cacher failed", "resource", lk.name, "err", err)
		}
	})
}

// start runs every cacher made so far (and those made later) and waits
// until each has loaded its first list, or ctx ends.
func (b *localBackend) start(ctx context.Context) error {
	b.mu.Lock()
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	b.runCtx, b.cancel = runCtx, cancel
	kinds := append([]*localKind(nil), b.order...)
	for _, lk := range kinds {
		b.run(lk)
	}
	b.mu.Unlock()
	for _, lk := range kinds {
		if lk.ready == nil {
			continue
		}
		if err := lk.ready(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("manager: cacher of %s: %w", lk.name, err)
		}
	}
	b.log.Info("cachers ready", "cachers", len(kinds))
	return nil
}

// stop stops every cacher, waits for them, and closes the stores.
func (b *localBackend) stop() {
	b.mu.Lock()
	b.stopped = true
	cancel := b.cancel
	kinds := b.order
	b.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	b.wg.Wait()
	for _, lk := range kinds {
		if lk.close != nil {
			lk.close()
		}
	}
	b.log.Info("cachers stopped and stores closed", "stores", len(kinds))
}

// readiness returns the first cacher that is not ready, as an error.
func (b *localBackend) readiness() error {
	b.mu.Lock()
	kinds := append([]*localKind(nil), b.order...)
	b.mu.Unlock()
	var errs []error
	for _, lk := range kinds {
		if err := lk.storage.ReadinessCheck(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", lk.name, err))
		}
	}
	return errors.Join(errs...)
}
