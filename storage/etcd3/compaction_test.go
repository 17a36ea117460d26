package etcd3

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/listwatch/listwatch/embedtest"
)

// probeCounter counts the tracker's probes: count-only ranges of one key.
type probeCounter struct {
	clientv3.KV
	key string
	n   atomic.Int64
}

func (p *probeCounter) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	if key == p.key {
		p.n.Add(1)
	}
	return p.KV.Get(ctx, key, opts...)
}

// Concurrent RefreshCompactRevision calls share probes, and each still
// returns a compaction another client made before it was called.
func TestRefreshCompactRevisionSharesProbes(t *testing.T) {
	ctx := testCtx(t)
	cli, err := embedtest.NewClient(etcdServer.Endpoints)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	counter := &probeCounter{KV: cli.KV}
	cli.KV = counter
	s := newTestStore(t, func(c *Config) { c.Client = cli })
	counter.key = s.compaction.probeKey

	resp, err := etcdServer.Client.Put(ctx, "/compaction-test", "x")
	if err != nil {
		t.Fatal(err)
	}
	compacted := resp.Header.Revision
	if _, err := etcdServer.Client.Compact(ctx, compacted); err != nil {
		t.Fatal(err)
	}
	if rev, err := s.RefreshCompactRevision(ctx); err != nil || rev != compacted {
		t.Fatalf("RefreshCompactRevision after a compaction to %d by another client: %d, %v", compacted, rev, err)
	}

	const goroutines, calls = 8, 25
	before := counter.n.Load()
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range calls {
				if rev, err := s.RefreshCompactRevision(ctx); err != nil || rev != compacted {
					t.Errorf("RefreshCompactRevision: %d, %v; want %d", rev, err, compacted)
					return
				}
			}
		})
	}
	wg.Wait()
	probes := counter.n.Load() - before
	if probes == 0 || probes > goroutines*calls*3/4 {
		t.Errorf("%d concurrent refreshes made %d probes, want some, and fewer than 3/4 of the calls", goroutines*calls, probes)
	}
	t.Logf("%d refreshes, %d probes", goroutines*calls, probes)
}
