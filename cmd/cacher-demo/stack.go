package main

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"path/filepath"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/etcdrun"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/server"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/storage/counting"
	"github.com/listwatch/listwatch/storage/etcd3"
)

// The demo's one resource.
const (
	group    = "demo.listwatch.dev"
	version  = "v1"
	plural   = "widgets"
	kind     = "Widget"
	keyRoot  = "/widgets"
	etcdRoot = "/registry"
)

// stackConfig says where etcd is and how the cacher is tuned.
type stackConfig struct {
	// dataDir holds the embedded etcd's data ("" = a temporary directory, removed on close).
	dataDir string
	// etcdEndpoints, when set, uses an existing etcd instead of an embedded one.
	etcdEndpoints []string
	// etcdClientURL is the embedded etcd's client URL ("" = a free loopback port).
	etcdClientURL string
	// listen is the HTTP address ("" = no HTTP server).
	listen string
	// bookmarkInterval and historyMax tune the cacher (0 = its defaults).
	bookmarkInterval time.Duration
	// cacheEncoded makes the cacher keep each widget as the JSON the HTTP
	// server writes (server.CacheCodec): HTTP lists copy the cached bytes.
	cacheEncoded bool
	// serverOptions, when set, adjusts the HTTP server's configuration
	// (TLS, authentication, authorization).
	serverOptions func(*server.Config)
	// etcdTLS is the client TLS of an existing etcd (nil: plain).
	etcdTLS *tls.Config
	// logger receives the stack's logs (nil: slog.Default()).
	logger *slog.Logger
}

// stack is etcd → etcd3 store → counting wrapper (what reaches etcd) → cacher → HTTP server.
type stack struct {
	etcd    *etcdrun.Server // nil with external endpoints
	client  *clientv3.Client
	health  *etcd3.Health // probes etcd in the background (see startHealth)
	store   *etcd3.Store
	counted *counting.Storage
	cacher  *cacher.Cacher
	srv     *server.Server
	baseURL string
	// metrics is the registry the stack owns: the cacher's metrics (kept
	// across cacher restarts) and the HTTP server's, served at /metrics.
	metrics       *prometheus.Registry
	cacherMetrics *cacher.PrometheusMetrics

	cancelHealth context.CancelFunc
	healthDone   chan struct{}
	cancelCacher context.CancelFunc
	cacherDone   chan error
	serveDone    chan error
	cancelServe  context.CancelFunc
	closeOnce    sync.Once
}

// startEmbeddedEtcd starts a member with its data below dataDir (""
// means a temporary directory, with fsync off: nothing to keep) serving
// clients on clientURL ("" means a free loopback port).
func startEmbeddedEtcd(dataDir, clientURL string) (*etcdrun.Server, error) {
	if clientURL == "" {
		clientURL = "http://127.0.0.1:0"
	}
	c := etcdrun.ServerConfig{NoFsync: dataDir == "", ClientURLs: []string{clientURL},
		PeerURLs: []string{"http://127.0.0.1:0"}}
	if dataDir != "" {
		c.Dir = filepath.Join(dataDir, "member")
	}
	return etcdrun.StartServer(c)
}

// compact compacts etcd's history up to rev.
func (s *stack) compact(ctx context.Context, rev int64) error {
	_, err := s.client.Compact(ctx, rev, clientv3.WithCompactPhysical())
	return err
}

// newEtcdClient connects to an existing etcd, with client TLS when
// tlsCfg is set; it fails within etcdrun's dial timeout (5 s), naming the
// endpoints and the dial error, when etcd does not answer.
func newEtcdClient(ctx context.Context, endpoints []string, tlsCfg *tls.Config) (*clientv3.Client, error) {
	return etcdrun.Connect(ctx, etcdrun.ClientConfig{Endpoints: endpoints, TLS: tlsCfg})
}

func newUnstructuredStore(cli *clientv3.Client, health *etcd3.Health) (*etcd3.Store, error) {
	return etcd3.New(etcd3.Config{
		Client: cli, Health: health, Codec: unstructured.UnstructuredJSONScheme,
		NewFunc:     func() runtime.Object { return &unstructured.Unstructured{} },
		NewListFunc: func() runtime.Object { return &unstructured.UnstructuredList{} },
		Prefix:      etcdRoot, ResourcePrefix: keyRoot,
	})
}

func startStack(ctx context.Context, cfg stackConfig) (*stack, error) {
	s := &stack{}
	if len(cfg.etcdEndpoints) > 0 {
		cli, err := newEtcdClient(ctx, cfg.etcdEndpoints, cfg.etcdTLS)
		if err != nil {
			return nil, err
		}
		s.client = cli
	} else {
		e, err := startEmbeddedEtcd(cfg.dataDir, cfg.etcdClientURL)
		if err != nil {
			return nil, err
		}
		cli, err := newEtcdClient(ctx, e.Endpoints, nil)
		if err != nil {
			e.Close()
			return nil, err
		}
		s.etcd, s.client = e, cli
	}
	s.startHealth(cfg.logger)
	store, err := newUnstructuredStore(s.client, s.health)
	if err != nil {
		s.close()
		return nil, err
	}
	s.store = store
	s.counted = counting.New(store)
	if err := s.startCacher(ctx, cfg); err != nil {
		s.close()
		return nil, err
	}
	if cfg.listen != "" {
		if err := s.startHTTP(cfg.listen, cfg.serverOptions); err != nil {
			s.close()
			return nil, err
		}
	}
	return s, nil
}

// startHealth starts probing etcd in the background: its loss and return
// are logged with or without traffic, requests fail fast while it is
// lost, and /readyz follows it.
func (s *stack) startHealth(logger *slog.Logger) {
	s.health = etcd3.NewHealth(s.client, etcd3.HealthConfig{Logger: logger})
	ctx, cancel := context.WithCancel(context.Background())
	s.cancelHealth, s.healthDone = cancel, make(chan struct{})
	go func() {
		defer close(s.healthDone)
		s.health.Run(ctx)
	}()
}

func (s *stack) startCacher(ctx context.Context, cfg stackConfig) error {
	if s.metrics == nil {
		s.metrics = prometheus.NewRegistry()
		m, err := cacher.NewPrometheusMetrics(s.metrics, plural+"."+group)
		if err != nil {
			return err
		}
		s.cacherMetrics = m
	}
	cc := cacher.Config{
		Metrics: s.cacherMetrics,
		Storage: s.counted, ResourcePrefix: keyRoot,
		NewFunc:          func() runtime.Object { return &unstructured.Unstructured{} },
		NewListFunc:      func() runtime.Object { return &unstructured.UnstructuredList{} },
		BookmarkInterval: cfg.bookmarkInterval,
	}
	if cfg.cacheEncoded {
		cc.Codec = server.CacheCodec(widgetResource(nil))
	}
	c, err := cacher.New(cc)
	if err != nil {
		return err
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan error, 1)
	go func() { done <- c.Run(runCtx) }()
	readyCtx, cancelReady := context.WithTimeout(ctx, 10*time.Second)
	defer cancelReady()
	if err := c.WaitReady(readyCtx); err != nil {
		cancel()
		<-done
		return fmt.Errorf("cacher did not become ready: %w", err)
	}
	s.cacher, s.cancelCacher, s.cacherDone = c, cancel, done
	return nil
}

// stopCacher stops the cacher; every watch it serves ends.
func (s *stack) stopCacher() error {
	if s.cacher == nil {
		return nil
	}
	s.cancelCacher()
	err := <-s.cacherDone
	s.cacher = nil
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}

// widgetResource is the widgets resource the HTTP server serves from st.
func widgetResource(st storage.Interface) server.Resource {
	return server.Resource{
		Group: group, Version: version, Plural: plural, Kind: kind, Namespaced: true,
		Storage: st, KeyRoot: keyRoot, Schema: widget.Schema(),
		// As a CRD would: kubectl scale widget w1 --replicas=3 works, and
		// status is written through /status only.
		Subresources: &server.Subresources{Status: true,
			Scale: &server.ScaleSubresource{SpecReplicasPath: ".spec.replicas", StatusReplicasPath: ".status.replicas"}},
		PrinterColumns: []server.PrinterColumn{
			{Name: "Size", Type: "integer", JSONPath: ".spec.replicas", Description: "Replicas wanted."},
			{Name: "Color", Type: "string", JSONPath: ".spec.color", Priority: 1},
		},
	}
}

func (s *stack) startHTTP(addr string, options func(*server.Config)) error {
	cfg := server.Config{Resources: []server.Resource{widgetResource(s.cacher)}, Metrics: s.metrics}
	if options != nil {
		options(&cfg)
	}
	srv, err := server.New(cfg)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("cannot listen on %s: %w", addr, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	s.srv, s.cancelServe, s.serveDone = srv, cancel, done
	s.baseURL = "http://" + ln.Addr().String()
	if cfg.TLS != nil {
		s.baseURL = "https://" + ln.Addr().String()
	}
	return nil
}

// close stops everything the stack started, in reverse order.
func (s *stack) close() {
	s.closeOnce.Do(func() {
		if s.cancelServe != nil {
			s.cancelServe()
			if err := <-s.serveDone; err != nil && !errors.Is(err, http.ErrServerClosed) && !errors.Is(err, context.Canceled) {
				fmt.Printf("http server: %v\n", err)
			}
		}
		_ = s.stopCacher()
		if s.cancelHealth != nil {
			s.cancelHealth()
			<-s.healthDone
		}
		if s.client != nil {
			s.client.Close()
		}
		if s.etcd != nil {
			s.etcd.Close()
		}
	})
}

// selectorPredicate builds a predicate from label and field selector strings.
func selectorPredicate(labelSel, fieldSel string) (storage.SelectionPredicate, error) {
	p := storage.SelectionPredicate{Label: labels.Everything(), Field: fields.Everything()}
	if labelSel != "" {
		l, err := labels.Parse(labelSel)
		if err != nil {
			return p, err
		}
		p.Label = l
	}
	if fieldSel != "" {
		f, err := fields.ParseSelector(fieldSel)
		if err != nil {
			return p, err
		}
		p.Field = f
	}
	return p, nil
}
