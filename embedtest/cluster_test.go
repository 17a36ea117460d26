package embedtest

import (
	"context"
	"testing"
	"time"
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
