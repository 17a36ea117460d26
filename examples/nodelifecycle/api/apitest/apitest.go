// Package apitest starts the node lifecycle example's API server for
// tests (api's own, and those of controller, taint, simulator and the
// demos): on the test's own key prefix of a shared embedded etcd, with a
// client and informers, all stopped by the test's cleanup. It is
// imported by tests only.
package apitest

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/nodelifecycle/api"
	"github.com/listwatch/listwatch/reflector"
)

// SyncTimeout bounds StartInformers' wait for the informers to sync.
const SyncTimeout = 30 * time.Second

// Prefix returns the test's etcd key prefix (embedtest.Prefix), emptied
// of what an earlier run of the test (go test -count=N) left there.
func Prefix(tb testing.TB, etcd *clientv3.Client) string {
	tb.Helper()
	p := embedtest.Prefix(tb)
	_, err := etcd.Delete(context.Background(), p, clientv3.WithPrefix())
	require.NoError(tb, err)
	return p
}

// Options adjust what Start starts.
type Options struct {
	// Server configures the API server; Start sets its Client and Prefix.
	Server api.ServerConfig
	// Informers are the informers' options.
	Informers []reflector.InformerOption
}

// Env is an API server serving the example's resources on a test's
// prefix, a client of it and informers of its resources.
type Env struct {
	// API is the server; Client talks to it over an HTTP client of its
	// own.
	API    *api.APIServer
	Client *api.Client
	// Informers are not started until StartInformers: a test may create
	// objects first, or hand them to what it tests itself.
	Informers *api.Informers

	ctx context.Context // the informers', cancelled at cleanup
}

// Start serves the example's resources on etcd below the test's emptied
// prefix (see Prefix) and builds a client and informers; the test's
// cleanup stops them. A test that starts parts reading them registers
// their stop after Start, so that the cleanup stops them first.
func Start(tb testing.TB, etcd *clientv3.Client, o Options) *Env {
	tb.Helper()
	o.Server.Client, o.Server.Prefix = etcd, Prefix(tb, etcd)
	ctx, cancel := context.WithCancel(context.Background())
	a, err := api.StartAPIServer(ctx, o.Server)
	if err != nil {
		cancel()
		tb.Fatalf("starting the API server: %v", err)
	}
	hc := &http.Client{Transport: &http.Transport{}}
	e := &Env{API: a, Client: api.NewClient(a.URL, hc), ctx: ctx}
	tb.Cleanup(func() {
		if e.Informers != nil {
			e.Informers.Factory.Shutdown()
		}
		cancel()
		hc.CloseIdleConnections()
		require.NoError(tb, a.Close())
	})
	e.Informers, err = api.NewInformers(e.Client, o.Informers...)
	require.NoError(tb, err)
	return e
}

// StartInformers starts the informers and waits until they have synced;
// the test fails when one has not within SyncTimeout.
func (e *Env) StartInformers(tb testing.TB) {
	tb.Helper()
	e.Informers.Factory.Start(e.ctx)
	ctx, cancel := context.WithTimeout(e.ctx, SyncTimeout)
	defer cancel()
	for res, ok := range e.Informers.Factory.WaitForCacheSync(ctx) {
		require.True(tb, ok, "informer of %s did not sync", res.Resource)
	}
}

// WaitFor polls cond, which should read memory only (informers, recorded
// reports), every 5 ms until it holds; the test fails, naming what it
// waited for, when ctx ends first.
func WaitFor(ctx context.Context, tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			tb.Fatalf("timed out waiting for %s", what)
		case <-tick.C:
		}
	}
}
