package demorun

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/listwatch/listwatch/examples/nodelifecycle/api"
	"github.com/listwatch/listwatch/reflector"
)

// StackConfig configures the part every demo cluster shares.
type StackConfig struct {
	// Etcd, when set, is the etcd to store in; nil starts an embedded
	// member (see startEtcd).
	Etcd *clientv3.Client
	// Server configures the API server; its Client is set by StartStack.
	Server api.ServerConfig
	// Transport is the HTTP transport of Client; nil is an http.Transport
	// keeping 64 idle connections per host.
	Transport http.RoundTripper
}

// Stack is what every demo cluster runs on: an etcd, the API server over
// it and a client of it, plus the goroutines of the example's parts and
// the informer factories they read, all stopped by Close. An example's
// own stack embeds it and adds its parts, in StartStack's start, with Go
// and StartInformers.
type Stack struct {
	// API is the API server; Client talks to it.
	API    *api.APIServer
	Client *api.Client
	// Etcd is the etcd client the API server stores with.
	Etcd *clientv3.Client

	etcd      *etcdMember
	hc        *http.Client
	runCtx    context.Context // the parts' context, cancelled by Close
	cancel    context.CancelFunc
	parts     group
	factories []*reflector.InformerFactory
}

// StartStack starts etcd (unless given) and the API server, then calls
// start to build and start the example's parts on it; when start fails
// it stops everything. The parts run on a context of their own, which
// ctx's end does not cancel: Close does.
func StartStack(ctx context.Context, cfg StackConfig, start func(ctx context.Context, s *Stack) error) (*Stack, error) {
	if cfg.Transport == nil {
		cfg.Transport = &http.Transport{MaxIdleConnsPerHost: 64}
	}
	s := &Stack{hc: &http.Client{Transport: cfg.Transport}}
	s.runCtx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	var err error
	if s.etcd, err = startEtcd(ctx, cfg.Etcd); err != nil {
		s.cancel()
		return nil, err
	}
	s.Etcd = s.etcd.Client
	cfg.Server.Client = s.Etcd
	if s.API, err = api.StartAPIServer(ctx, cfg.Server); err == nil {
		s.Client = api.NewClient(s.API.URL, s.hc)
		err = start(ctx, s)
	}
	if err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

// Context is the context the parts run on; Close cancels it.
func (s *Stack) Context() context.Context { return s.runCtx }

// Go runs run, the part called name, on the parts' context until Close;
// its error, unless it ended because the context was cancelled, is the
// one Close returns.
func (s *Stack) Go(name string, run func(ctx context.Context) error) {
	s.parts.Go(name, func() error { return run(s.runCtx) })
}

// StartInformers starts f's informers on the parts' context; Close shuts
// them down and WaitForSync waits for them.
func (s *Stack) StartInformers(f *reflector.InformerFactory) {
	f.Start(s.runCtx)
	s.factories = append(s.factories, f)
}

// WaitForSync waits, at most timeout, until every started informer has
// synced, and names one that did not.
func (s *Stack) WaitForSync(ctx context.Context, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for _, f := range s.factories {
		for res, ok := range f.WaitForCacheSync(ctx) {
			if !ok {
				return fmt.Errorf("demo: informer of %s did not sync", res.Resource)
			}
		}
	}
	return nil
}

// Close stops the parts, then the informers, the API server and etcd
// (when StartStack started it), and returns the first error a part
// failed with joined with the API server's.
func (s *Stack) Close() error {
	s.cancel()
	errs := []error{s.parts.Wait()}
	for _, f := range s.factories {
		f.Shutdown()
	}
	s.hc.CloseIdleConnections()
	if s.API != nil {
		errs = append(errs, s.API.Close())
	}
	s.etcd.Close()
	return errors.Join(errs...)
}
