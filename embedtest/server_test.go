package embedtest

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func TestStartPutGetCompact(t *testing.T) {
	start := time.Now()
	s := Start(t)
	t.Logf("single member started in %v", time.Since(start))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var last int64
	for i := 0; i < 3; i++ {
		r, err := s.Client.Put(ctx, Prefix(t)+"k", "v")
		if err != nil {
			t.Fatal(err)
		}
		last = r.Header.Revision
	}
	if err := s.Compact(ctx, last-1); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Client.Get(ctx, Prefix(t)+"k", clientv3WithRev(last-2)); err == nil {
		t.Fatal("read below the compacted revision succeeded")
	}
	r, err := s.Client.Get(ctx, Prefix(t)+"k")
	if err != nil || len(r.Kvs) != 1 || string(r.Kvs[0].Value) != "v" {
		t.Fatalf("get after compact: %v %v", r, err)
	}
}
