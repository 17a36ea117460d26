package taint

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/listwatch/listwatch/embedtest"
)

// etcdServer is the package's one embedded etcd; each test uses its own
// key prefix. RunMain also checks that no goroutine leaked.
var etcdServer *embedtest.Server

func TestMain(m *testing.M) {
	os.Exit(embedtest.RunMain(m, &etcdServer, embedtest.Options{}))
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
