package api

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/listwatch/listwatch/embedtest"
)

// etcdServer is the package's one embedded etcd; each test uses its own
// key prefix.
var etcdServer *embedtest.Server

func TestMain(m *testing.M) {
	os.Exit(embedtest.RunMain(m, &etcdServer, embedtest.Options{}))
}

func testCtx(tb testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	tb.Cleanup(cancel)
	return ctx
}

// startServer serves the example's resources below the test's prefix.
func startServer(tb testing.TB) *APIServer {
	tb.Helper()
	_, err := etcdServer.Client.Delete(context.Background(), embedtest.Prefix(tb), clientv3.WithPrefix()) // -count=N reruns
	require.NoError(tb, err)
	a, err := StartAPIServer(testCtx(tb), ServerConfig{Client: etcdServer.Client, Prefix: embedtest.Prefix(tb)})
	require.NoError(tb, err)
	tb.Cleanup(func() { require.NoError(tb, a.Close()) })
	return a
}
