package api_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/listwatch/listwatch/embedtest"
)

// etcdServer is the package's one embedded etcd; each test uses its own
// key prefix.
var etcdServer *embedtest.Server

func TestMain(m *testing.M) {
	os.Exit(embedtest.RunMain(m, &etcdServer, embedtest.Options{}))
}

// testCtx is a context that ends 30 s after the test starts, or with it.
func testCtx(tb testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	tb.Cleanup(cancel)
	return ctx
}
