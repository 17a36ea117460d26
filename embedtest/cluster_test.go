package embedtest

import (
	"context"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

func TestClusterLeaderStopRestart(t *testing.T) {
	start := time.Now()
	c := StartCluster(t)
	t.Logf("3-member cluster started in %v", time.Since(start))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	lead, err := c.WaitLeader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Client.Put(ctx, Prefix(t)+"a", "1"); err != nil {
		t.Fatal(err)
	}

	c.StopMember(lead)
	if c.Members[lead].Etcd() != nil {
		t.Fatal("stopped member still reports a server")
	}
	newLead, err := c.WaitLeader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if newLead == lead {
		t.Fatalf("leader %d still leads after being stopped", lead)
	}
	// Two of three members keep a quorum: writes still succeed.
	r, err := c.Client.Put(ctx, Prefix(t)+"b", "2")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.RestartMember(lead); err != nil {
		t.Fatal(err)
	}
	if err := c.Compact(ctx, r.Header.Revision); err != nil {
		t.Fatal(err)
	}
	got, err := c.Client.Get(ctx, Prefix(t), clientv3WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Kvs) != 2 {
		t.Fatalf("got %d keys after restart, want 2", len(got.Kvs))
	}
}

// TestClusterPartition: a leader cut off its peers loses its quorum: a
// linearizable read through it fails, while the other two elect a leader
// and take writes; after Heal the cut-off member catches up.
func TestClusterPartition(t *testing.T) {
	c := StartCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	lead, err := c.WaitLeader(ctx)
	if err != nil {
		t.Fatal(err)
	}
	other := (lead + 1) % 3
	cut, err := NewClient([]string{c.Members[lead].ClientURL.String()})
	if err != nil {
		t.Fatal(err)
	}
	defer cut.Close()
	kept, err := NewClient([]string{c.Members[other].ClientURL.String()})
	if err != nil {
		t.Fatal(err)
	}
	defer kept.Close()

	c.Partition(lead)
	// A write proposed through the old leader before the majority elected
	// another is lost with it (etcd answers "request timed out"): retry.
	var r *clientv3.PutResponse
	for {
		short, cancelShort := context.WithTimeout(ctx, 3*time.Second)
		r, err = kept.Put(short, Prefix(t)+"k", "after")
		cancelShort()
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("no write through the majority: %v", err)
		}
	}
	short, cancelShort := context.WithTimeout(ctx, time.Second)
	_, err = cut.Get(short, Prefix(t)+"k")
	cancelShort()
	if err == nil {
		t.Fatal("a linearizable read through the cut-off member succeeded")
	}
	c.Heal()
	for {
		got, err := cut.Get(ctx, Prefix(t)+"k", clientv3WithSerializable())
		if err != nil {
			t.Fatal(err)
		}
		if got.Header.Revision >= r.Header.Revision && len(got.Kvs) == 1 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("the healed member did not catch up")
		case <-time.After(50 * time.Millisecond):
		}
	}
}
