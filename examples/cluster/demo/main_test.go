package demo

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/nodelifecycle/api/apitest"
)

// etcdServer is the package's one embedded etcd; each test uses its own
// key prefix. RunMain also checks that no goroutine leaked.
var etcdServer *embedtest.Server

func TestMain(m *testing.M) {
	os.Exit(embedtest.RunMain(m, &etcdServer, embedtest.Options{}))
}

// startStack starts a cluster below the test's prefix with o (its
// Client and Prefix set here) and stops it at the end of the test.
func startStack(t *testing.T, o Options) *Stack {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	o.Client, o.Prefix = etcdServer.Client, apitest.Prefix(t, etcdServer.Client)
	_, err := etcdServer.Client.Delete(ctx, o.Prefix+"-leader", clientv3.WithPrefix())
	require.NoError(t, err)
	s, err := Start(ctx, o)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s
}

// startWithKubectl starts a stack with the default options and a kubectl
// for it, and returns them with a script whose waits end with the test's
// 60 s; it skips the test when kubectl is not installed.
func startWithKubectl(t *testing.T) (*script, *kubectl) {
	t.Helper()
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Skip("kubectl is not installed")
	}
	s := startStack(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	k, err := newKubectl(s.API.URL, t.TempDir())
	require.NoError(t, err)
	return &script{ctx: ctx, s: s}, k
}
