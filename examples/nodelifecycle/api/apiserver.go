package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/server"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/storage/etcd3"
)

// ServerConfig configures an APIServer.
type ServerConfig struct {
	// Client reaches etcd. Required.
	Client *clientv3.Client
	// Prefix is the etcd key prefix of all resources, such as "/registry".
	// Required.
	Prefix string
	// Listen is the HTTP address; "" means a free loopback port.
	Listen string
	// Logger receives the server's request failures; nil means slog.Default()
	// (the server's default).
	Logger *slog.Logger
	// Edit, when set, adjusts the HTTP server's configuration.
	Edit func(*server.Config)
	// Cacher, when set, adjusts the cacher configuration of each resource
	// (tests shrink a cache's history with it).
	Cacher func(k Kind, cfg *cacher.Config)
	// Handler, when set, wraps the HTTP server's handler (tests use it to
	// cut connections).
	Handler func(http.Handler) http.Handler
}

// APIServer serves nodes, pods, leases, deployments and replicasets over
// one etcd: an etcd3 store and
// a cacher per resource behind one HTTP server.
type APIServer struct {
	// URL is the server's base URL, such as http://127.0.0.1:34567.
	URL string
	// Stores are the etcd3 stores by resource (writes that bypass HTTP).
	Stores map[Kind]*etcd3.Store

	srv    *server.Server
	cancel context.CancelFunc
	wg     sync.WaitGroup
	errMu  sync.Mutex
	err    error
}

// StartAPIServer starts the cachers, waits until they are ready and starts
// serving. Close stops everything it started.
func StartAPIServer(ctx context.Context, cfg ServerConfig) (*APIServer, error) {
	if cfg.Client == nil || cfg.Prefix == "" {
		return nil, errors.New("api: ServerConfig.Client and Prefix are required")
	}
	runCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	a := &APIServer{Stores: map[Kind]*etcd3.Store{}, cancel: cancel}
	caches := map[Kind]storage.Interface{}
	for _, k := range AllKinds {
		c, err := a.startResource(runCtx, cfg, k)
		if err != nil {
			a.Close()
			return nil, err
		}
		caches[k] = c
	}
	res := append(Resources(caches[Nodes], caches[Pods], caches[Leases]),
		AppsResources(caches[Deployments], caches[ReplicaSets])...)
	sc := server.Config{Resources: res, Logger: cfg.Logger}
	if cfg.Edit != nil {
		cfg.Edit(&sc)
	}
	srv, err := server.New(sc)
	if err != nil {
		a.Close()
		return nil, err
	}
	a.srv = srv
	addr := cfg.Listen
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		a.Close()
		return nil, fmt.Errorf("api: cannot listen on %s: %w", addr, err)
	}
	a.URL = "http://" + ln.Addr().String()
	var h http.Handler = ProtobufBodies(StrategicMergePatches(srv))
	if cfg.Handler != nil {
		h = cfg.Handler(srv)
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	a.wg.Go(func() {
		if err := hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.setErr(err)
		}
	})
	a.wg.Go(func() {
		<-runCtx.Done()
		srv.Close()
		shutdownCtx, stop := context.WithTimeout(context.Background(), 5*time.Second)
		defer stop()
		_ = hs.Shutdown(shutdownCtx)
		_ = hs.Close()
	})
	return a, nil
}

// startResource starts k's store and cacher and waits for the cacher to be
// ready.
func (a *APIServer) startResource(ctx context.Context, cfg ServerConfig, k Kind) (*cacher.Cacher, error) {
	newObj := func() runtime.Object { return &unstructured.Unstructured{} }
	newList := func() runtime.Object { return &unstructured.UnstructuredList{} }
	st, err := etcd3.New(etcd3.Config{Client: cfg.Client, Codec: unstructured.UnstructuredJSONScheme,
		NewFunc: newObj, NewListFunc: newList, Prefix: cfg.Prefix, ResourcePrefix: KeyRoots[k]})
	if err != nil {
		return nil, err
	}
	a.Stores[k] = st
	cc := cacher.Config{Storage: st, ResourcePrefix: KeyRoots[k], NewFunc: newObj, NewListFunc: newList}
	if k == Pods {
		cc.GetAttrs, cc.IndexFields = PodAttrs, []string{"spec.nodeName"}
	}
	if cfg.Cacher != nil {
		cfg.Cacher(k, &cc)
	}
	c, err := cacher.New(cc)
	if err != nil {
		return nil, err
	}
	a.wg.Go(func() {
		if err := c.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
			a.setErr(fmt.Errorf("cacher %s: %w", k.Plural, err))
		}
	})
	readyCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := c.WaitReady(readyCtx); err != nil {
		return nil, fmt.Errorf("api: cacher of %s not ready: %w", k.Plural, err)
	}
	return c, nil
}

func (a *APIServer) setErr(err error) {
	a.errMu.Lock()
	defer a.errMu.Unlock()
	if a.err == nil {
		a.err = err
	}
}

// Close stops serving and the cachers, waits for their goroutines and
// returns the first error one of them failed with.
func (a *APIServer) Close() error {
	a.cancel()
	a.wg.Wait()
	for _, st := range a.Stores {
		st.Close()
	}
	a.errMu.Lock()
	defer a.errMu.Unlock()
	return a.err
}
