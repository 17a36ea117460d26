package taint

import (
	"context"
	"net/http"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/nodelifecycle/api"
)

// etcdServer is the package's one embedded etcd; each test uses its own
// key prefix. RunMain also checks that no goroutine leaked.
var etcdServer *embedtest.Server

func TestMain(m *testing.M) {
	os.Exit(embedtest.RunMain(m, &etcdServer, embedtest.Options{}))
}

// startAPI serves the example's resources on the test's (emptied) prefix
// and returns a client and started, synced informers.
func startAPI(t *testing.T, ctx context.Context) (*api.APIServer, *api.Client, *api.Informers) {
	t.Helper()
	_, err := etcdServer.Client.Delete(ctx, embedtest.Prefix(t), clientv3.WithPrefix())
	require.NoError(t, err)
	a, err := api.StartAPIServer(ctx, api.ServerConfig{Client: etcdServer.Client, Prefix: embedtest.Prefix(t)})
	require.NoError(t, err)
	hc := &http.Client{Transport: &http.Transport{}}
	c := api.NewClient(a.URL, hc)
	inf, err := api.NewInformers(c)
	require.NoError(t, err)
	inf.Factory.Start(ctx)
	t.Cleanup(func() {
		inf.Factory.Shutdown()
		hc.CloseIdleConnections()
		require.NoError(t, a.Close())
	})
	for _, ok := range inf.Factory.WaitForCacheSync(ctx) {
		require.True(t, ok)
	}
	return a, c, inf
}

// waitFor polls cond (in-memory state only) until it holds.
func waitFor(ctx context.Context, t *testing.T, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-tick.C:
		}
	}
}
