package k8scompat

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/features"
	"k8s.io/apiserver/pkg/registry/generic"
	k8sstorage "k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	"k8s.io/apiserver/pkg/storage/storagebackend/factory"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/tools/cache"

	"github.com/listwatch/listwatch/cacher"
	lwstorage "github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/storage/etcd3"
	"github.com/listwatch/listwatch/watchcache"
)

// DecoratorConfig configures StorageDecorator. Client is required; every
// other zero value means a default that gives what Kubernetes' own storage
// gives a generic registry.
type DecoratorConfig struct {
	// Client is the etcd client every resource is stored through. Required.
	// StorageDecorator does not close it.
	Client *clientv3.Client

	// Cache reports whether a resource is served from listwatch's cacher
	// (reads at RV "0" and watches from memory, as Kubernetes' watch cache)
	// or straight from etcd. nil caches every resource, as Kubernetes'
	// apiserver does by default.
	Cache func(schema.GroupResource) bool
	// CacheCapacity bounds each cacher's event history (cacher.Config
	// HistoryMaxCapacity); 0 means the cacher's default. The history's time
	// span is the storage config's EventsHistoryWindow when set.
	CacheCapacity int
	// CacheEncoded keeps cached objects encoded with the resource's storage
	// codec, decoding them on read (cacher.Config.Codec): less memory, more
	// CPU per read. The codec must round-trip objects exactly.
	CacheEncoded bool

	// Registerer receives each cacher's metrics (cacher.NewPrometheusMetrics,
	// labelled with the resource); they are unregistered when the resource's
	// storage is destroyed. nil records no metrics.
	Registerer prometheus.Registerer
	// Logger receives the stores' and cachers' logs, with the resource
	// attached; nil means slog.Default().
	Logger *slog.Logger

	// AllowUnsafeMalformedObjectDeletion decides how corrupt objects are
	// handled (see KubernetesTransformer); nil means the value of
	// Kubernetes' feature gate of that name (utilfeature.DefaultFeatureGate,
	// on by default in Kubernetes 1.37), read when a resource's storage is
	// built, as Kubernetes' storage does.
	AllowUnsafeMalformedObjectDeletion *bool
}

// StorageDecorator returns a generic.StorageDecorator that keeps each
// resource of a k8s.io/apiserver generic registry in listwatch's etcd store
// (storage/etcd3) and, unless cfg.Cache says otherwise, serves it through
// listwatch's cacher; the registry sees the result through the adapter
// (*Store). Set it as generic.RESTOptions.Decorator.
//
// From each resource's storagebackend.ConfigForResource it uses Codec,
// Prefix, Transformer (nil: stored as given, as Kubernetes does without
// encryption), CompactionInterval (a compactor per decorator while any of
// its resources lives, coordinating with every other compactor and
// Kubernetes apiserver on the same etcd through the compact_rev_key key; 0
// means none) and EventsHistoryWindow. Its errors are classified as
// Kubernetes' etcd3 store classifies them (see KubernetesTransformer; unlike
// Kubernetes' storage factory, the decorator does not turn every transformer
// error into a corrupt object: wrap the transformer with Kubernetes'
// etcd3.WithCorruptObjErrorHandlingTransformer for that). It is called for
// every read and write, so a transformer that swaps its keys in
// place (Kubernetes' dynamic encryption-config reload) takes effect for the
// next read or write; (*Store).SetTransformer replaces it outright.
//
// The destroy function it returns for a resource stops the cacher and the
// etcd store's watches (and, for the last live resource, the compactor),
// and returns once they have stopped; calling it again does nothing.
func StorageDecorator(cfg DecoratorConfig) generic.StorageDecorator {
	d := &decorator{cfg: cfg}
	if d.cfg.Logger == nil {
		d.cfg.Logger = slog.Default()
	}
	return d.decorate
}

// decorator is the state StorageDecorator's function shares between
// resources: the compactor, started with the first resource that asks
// for one and stopped with the last.
type decorator struct {
	cfg DecoratorConfig

	mu        sync.Mutex
	compactor *runningCompactor
}

func (d *decorator) decorate(rc *storagebackend.ConfigForResource, resourcePrefix string,
	keyFunc func(runtime.Object) (string, error), newFunc, newListFunc func() runtime.Object,
	getAttrs k8sstorage.AttrFunc, triggers k8sstorage.IndexerFuncs, _ *cache.Indexers,
) (k8sstorage.Interface, factory.DestroyFunc, error) {
	if d.cfg.Client == nil {
		return nil, nil, errors.New("k8scompat: DecoratorConfig.Client is required")
	}
	if rc == nil {
		return nil, nil, errors.New("k8scompat: StorageDecorator needs the resource's storage config")
	}
	if rc.Codec == nil || newFunc == nil || newListFunc == nil {
		return nil, nil, fmt.Errorf("k8scompat: storage for %s needs a codec, newFunc and newListFunc", rc.GroupResource)
	}
	resourcePrefix = strings.TrimSuffix(resourcePrefix, "/")
	if resourcePrefix == "" {
		return nil, nil, fmt.Errorf("k8scompat: storage for %s needs a resource prefix", rc.GroupResource)
	}
	gate := utilfeature.DefaultFeatureGate.Enabled(features.AllowUnsafeMalformedObjectDeletion)
	if d.cfg.AllowUnsafeMalformedObjectDeletion != nil {
		gate = *d.cfg.AllowUnsafeMalformedObjectDeletion
	}
	log := d.cfg.Logger.With("resource", rc.GroupResource.String())

	k8sTransformer := rc.Transformer
	scfg := etcd3.Config{
		Client:         d.cfg.Client,
		Codec:          rc.Codec,
		NewFunc:        newFunc,
		NewListFunc:    newListFunc,
		Prefix:         rc.Prefix,
		ResourcePrefix: resourcePrefix,
		Transformer:    KubernetesTransformer(k8sTransformer, gate),
		Logger:         log,
	}
	if !gate {
		// Kubernetes without the feature ends a list at its first
		// unreadable value.
		scfg.MaxCorruptObjects = -1
	}
	store, err := etcd3.New(scfg)
	if err != nil {
		return nil, nil, err
	}
	stopCompactor := d.startCompactor(rc.CompactionInterval)
	stops := []func(){store.Close, stopCompactor}

	var served lwstorage.Interface = store
	cached := d.cfg.Cache == nil || d.cfg.Cache(rc.GroupResource)
	if cached {
		c, stop, err := d.startCacher(rc, resourcePrefix, keyFunc, newFunc, newListFunc, getAttrs, triggers, store, log)
		if err != nil {
			runAll(stops)
			return nil, nil, err
		}
		served = c
		stops = append([]func(){stop}, stops...)
	}
	s, err := New(Config{Storage: served, CompactRevision: store.CompactRevision, ShareWatchEncodings: cached})
	if err != nil {
		runAll(stops)
		return nil, nil, err
	}
	s.tr = &transformerSlot{store: store, gate: gate}
	s.tr.cur.Store(&k8sTransformerRef{k8sTransformer})
	var once sync.Once
	return s, func() { once.Do(func() { runAll(stops) }) }, nil
}

// startCacher builds the resource's cacher over store, runs it and returns
// it with the function that stops it and waits for it to return.
func (d *decorator) startCacher(rc *storagebackend.ConfigForResource, resourcePrefix string,
	keyFunc func(runtime.Object) (string, error), newFunc, newListFunc func() runtime.Object,
	getAttrs k8sstorage.AttrFunc, triggers k8sstorage.IndexerFuncs, store *etcd3.Store, log *slog.Logger,
) (*cacher.Cacher, func(), error) {
	ccfg := cacher.Config{
		Storage:            store,
		ResourcePrefix:     resourcePrefix,
		KeyFunc:            keyFunc,
		NewFunc:            newFunc,
		NewListFunc:        newListFunc,
		IndexFields:        slices.Sorted(maps.Keys(triggers)),
		HistoryWindow:      rc.EventsHistoryWindow,
		HistoryMaxCapacity: d.cfg.CacheCapacity,
		Logger:             log,
	}
	if getAttrs != nil {
		ccfg.GetAttrs = lwstorage.AttrFunc(getAttrs)
	}
	if d.cfg.CacheEncoded {
		ccfg.Codec = watchcache.RuntimeCodec{Codec: rc.Codec, New: newFunc, Versioner: store.Versioner()}
	}
	var unregister func()
	if d.cfg.Registerer != nil {
		reg := &trackingRegisterer{Registerer: d.cfg.Registerer}
		m, err := cacher.NewPrometheusMetrics(reg, rc.GroupResource.String())
		if err != nil {
			// A second storage for the same resource (a subresource's,
			// say) finds the collectors registered: it goes unmeasured.
			log.Warn("k8scompat: cacher metrics not registered", "err", err)
			reg.unregisterAll()
		} else {
			ccfg.Metrics = m
			unregister = reg.unregisterAll
		}
	}
	c, err := cacher.New(ccfg)
	if err != nil {
		if unregister != nil {
			unregister()
		}
		return nil, nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := c.Run(ctx); err != nil {
			log.Error("k8scompat: cacher stopped", "err", err)
		}
	}()
	return c, func() {
		cancel()
		<-done
		if unregister != nil {
			unregister()
		}
	}, nil
}

// startCompactor makes sure a compactor runs at interval while the returned
// function has not been called; 0 starts none. The first interval asked for
// wins.
func (d *decorator) startCompactor(interval time.Duration) (release func()) {
	if interval <= 0 {
		return func() {}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.compactor == nil {
		rc, err := startCompactor(d.cfg.Client, interval, d.cfg.Logger)
		if err != nil {
			d.cfg.Logger.Error("k8scompat: compactor not started", "err", err)
			return func() {}
		}
		d.compactor = rc
	}
	d.compactor.users++
	var once sync.Once
	return func() {
		once.Do(func() {
			d.mu.Lock()
			rc := d.compactor
			rc.users--
			last := rc.users == 0
			if last {
				d.compactor = nil
			}
			d.mu.Unlock()
			if last {
				rc.stop()
			}
		})
	}
}

// runningCompactor is a compactor with its Run goroutine.
type runningCompactor struct {
	users int
	stop  func()
}

func startCompactor(cli *clientv3.Client, interval time.Duration, log *slog.Logger) (*runningCompactor, error) {
	c, err := etcd3.NewCompactor(etcd3.CompactorConfig{Client: cli, Interval: interval, Logger: log})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := c.Run(ctx); err != nil {
			log.Error("k8scompat: compactor stopped", "err", err)
		}
	}()
	return &runningCompactor{stop: func() { cancel(); <-done }}, nil
}

func runAll(fns []func()) {
	for _, fn := range fns {
		fn()
	}
}

// trackingRegisterer registers collectors with a Registerer and remembers
// them, so that they can all be unregistered again.
type trackingRegisterer struct {
	prometheus.Registerer
	mu  sync.Mutex
	reg []prometheus.Collector
}

func (t *trackingRegisterer) Register(c prometheus.Collector) error {
	if err := t.Registerer.Register(c); err != nil {
		return err
	}
	t.mu.Lock()
	t.reg = append(t.reg, c)
	t.mu.Unlock()
	return nil
}

func (t *trackingRegisterer) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := t.Register(c); err != nil {
			panic(err)
		}
	}
}

func (t *trackingRegisterer) unregisterAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range t.reg {
		t.Registerer.Unregister(c)
	}
	t.reg = nil
}
