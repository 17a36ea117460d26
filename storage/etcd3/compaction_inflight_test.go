package etcd3

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/listwatch/listwatch/embedtest"
)

// firstProbeHolder holds the first probe (a range of key) until released;
// the others pass.
type firstProbeHolder struct {
	clientv3.KV
	key     string
	probes  atomic.Int64
	held    chan struct{} // closed once the first probe is held
	release chan struct{}
}

func (h *firstProbeHolder) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	if key == h.key && h.probes.Add(1) == 1 {
		close(h.held)
		select {
		case <-h.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return h.KV.Get(ctx, key, opts...)
}

// A refresh called while an older probe is under way starts its own probe
// at once rather than first waiting for the older one to come back: its
// answer takes one round trip, not up to two.
func TestRefreshDoesNotWaitForAnOlderProbe(t *testing.T) {
	ctx := testCtx(t)
	cli, err := embedtest.NewClient(etcdServer.Endpoints)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	holder := &firstProbeHolder{KV: cli.KV, held: make(chan struct{}), release: make(chan struct{})}
	cli.KV = holder
	s := newTestStore(t, func(c *Config) { c.Client = cli })
	holder.key = s.compaction.probeKey

	first := make(chan error, 1)
	go func() {
		_, err := s.RefreshCompactRevision(ctx)
		first <- err
	}()
	select {
	case <-holder.held:
	case <-ctx.Done():
		t.Fatal("the first refresh never probed")
	}
	second := make(chan error, 1)
	go func() {
		_, err := s.RefreshCompactRevision(ctx)
		second <- err
	}()
	timeout := time.NewTimer(10 * time.Second)
	defer timeout.Stop()
	select {
	case err := <-second:
		if err != nil {
			t.Errorf("second refresh: %v", err)
		}
	case <-timeout.C:
		t.Error("a refresh called while an older probe was held did not return until that probe did")
		close(holder.release)
		<-second
		<-first
		return
	}
	close(holder.release)
	if err := <-first; err != nil {
		t.Errorf("first refresh: %v", err)
	}
}
