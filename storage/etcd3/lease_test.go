package etcd3

import (
	"fmt"
	"sync"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
)

func TestLeaseReuse(t *testing.T) {
	s := newTestStore(t)
	ctx := testCtx(t)
	before, err := etcdServer.Client.Leases(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		if err := s.Create(ctx, fmt.Sprintf("/widgets/ns/w%d", i), testWidget(fmt.Sprintf("w%d", i), nil), nil, 600); err != nil {
			t.Fatal(err)
		}
	}
	ids := map[int64]bool{}
	for i := 0; i < 5; i++ {
		ids[rawGet(t, s, fmt.Sprintf("/widgets/ns/w%d", i)).Kvs[0].Lease] = true
	}
	if len(ids) != 1 || ids[0] {
		t.Fatalf("keys use leases %v, want one shared lease", ids)
	}
	after, err := etcdServer.Client.Leases(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(after.Leases) - len(before.Leases); n != 1 {
		t.Fatalf("%d leases granted for 5 writes, want 1", n)
	}
	var id int64
	for k := range ids {
		id = k
	}
	ttl, err := etcdServer.Client.TimeToLive(ctx, clientv3.LeaseID(id))
	if err != nil {
		t.Fatal(err)
	}
	// 600 s plus a reuse window of min(60 s, 5% of 600 s) = 30 s.
	if ttl.GrantedTTL != 630 {
		t.Fatalf("granted TTL %d, want 630", ttl.GrantedTTL)
	}
	// A very different TTL needs its own lease.
	if err := s.Create(ctx, "/widgets/ns/short", testWidget("short", nil), nil, 30); err != nil {
		t.Fatal(err)
	}
	if l := rawGet(t, s, "/widgets/ns/short").Kvs[0].Lease; l == id || l == 0 {
		t.Fatalf("30 s TTL reused the 630 s lease (%d)", l)
	}
}

func TestLeaseMaxObjects(t *testing.T) {
	s := newTestStore(t, func(c *Config) { c.LeaseMaxObjects = 2 })
	ctx := testCtx(t)
	ids := map[int64]int{}
	for i := 0; i < 4; i++ {
		key := fmt.Sprintf("/widgets/ns/w%d", i)
		if err := s.Create(ctx, key, testWidget(fmt.Sprintf("w%d", i), nil), nil, 600); err != nil {
			t.Fatal(err)
		}
		ids[rawGet(t, s, key).Kvs[0].Lease]++
	}
	if len(ids) != 2 {
		t.Fatalf("leases %v, want 2 leases of 2 objects", ids)
	}
}

func TestUpdateTTL(t *testing.T) {
	s := newTestStore(t)
	ctx := testCtx(t)
	if err := s.Create(ctx, "/widgets/ns/a", testWidget("a", nil), nil, 600); err != nil {
		t.Fatal(err)
	}
	lease := rawGet(t, s, "/widgets/ns/a").Kvs[0].Lease
	var seenTTL int64
	update := func(ttl *uint64) {
		t.Helper()
		err := s.GuaranteedUpdate(ctx, "/widgets/ns/a", &widget.Widget{}, false, nil,
			func(in runtime.Object, res storage.ResponseMeta) (runtime.Object, *uint64, error) {
				seenTTL = res.TTL
				w := in.(*widget.Widget)
				w.Spec.Replicas++
				return w, ttl, nil
			}, nil, storage.UpdateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	update(nil)
	if got := rawGet(t, s, "/widgets/ns/a").Kvs[0].Lease; got != lease {
		t.Fatalf("nil ttl changed the lease %d -> %d", lease, got)
	}
	if seenTTL <= 0 || seenTTL > 630 {
		t.Fatalf("ResponseMeta.TTL %d", seenTTL)
	}
	zero := uint64(0)
	update(&zero)
	if got := rawGet(t, s, "/widgets/ns/a").Kvs[0].Lease; got != 0 {
		t.Fatalf("ttl 0 kept lease %d", got)
	}
	// A 1 s TTL expires the key.
	one := uint64(1)
	update(&one)
	waitFor(t, "the key to expire", func() bool { return len(rawGet(t, s, "/widgets/ns/a").Kvs) == 0 })
}

// TestUpdateCASRetriesOnConcurrentWrite checks the compare-and-swap at the
// raw etcd level: a write that lands between the read and the transaction
// makes the transaction fail, and the update is redone on the new state.
func TestUpdateCASRetriesOnConcurrentWrite(t *testing.T) {
	s := newTestStore(t)
	ctx := testCtx(t)
	mustCreate(t, s, "/widgets/ns/a", testWidget("a", nil))
	ek, _ := s.prepareKey("/widgets/ns/a")
	calls := 0
	out := &widget.Widget{}
	err := s.GuaranteedUpdate(ctx, "/widgets/ns/a", out, false, nil,
		func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
			calls++
			if calls == 1 {
				// Someone else writes replicas=10 behind our back.
				other := testWidget("a", nil)
				other.Spec.Replicas = 10
				data, err := runtime.Encode(widget.Codec, other)
				if err != nil {
					return nil, nil, err
				}
				if _, err := etcdServer.Client.Put(ctx, ek, string(data)); err != nil {
					return nil, nil, err
				}
			}
			w := in.(*widget.Widget)
			w.Spec.Replicas++
			return w, nil, nil
		}, nil, storage.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 2 || out.Spec.Replicas != 11 {
		t.Fatalf("tryUpdate called %d times, replicas %d; want 2 and 11", calls, out.Spec.Replicas)
	}
	// Delete with a stale cached object is retried on the fresh state too.
	stale := &widget.Widget{}
	if err := s.Get(ctx, "/widgets/ns/a", storage.GetOptions{}, stale); err != nil {
		t.Fatal(err)
	}
	updateTo(t, s, "/widgets/ns/a", func(w *widget.Widget) { w.Spec.Replicas = 99 })
	del := &widget.Widget{}
	if err := s.Delete(ctx, "/widgets/ns/a", del, nil, nil, stale, storage.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if del.Spec.Replicas != 99 {
		t.Fatalf("delete returned the stale object (replicas %d)", del.Spec.Replicas)
	}
}

// TestConcurrentUpdatesLoseNothing runs conflicting GuaranteedUpdates from
// several goroutines, half of them with a stale cached object: every
// increment lands exactly once.
func TestConcurrentUpdatesLoseNothing(t *testing.T) {
	s := newTestStore(t)
	ctx := testCtx(t)
	created := mustCreate(t, s, "/widgets/ns/c", testWidget("c", nil))
	const workers, each = 4, 10
	var wg sync.WaitGroup
	for i := range workers {
		wg.Go(func() {
			for range each {
				var cached runtime.Object
				if i%2 == 0 {
					cached = created.DeepCopyObject()
				}
				if err := s.GuaranteedUpdate(ctx, "/widgets/ns/c", &widget.Widget{}, false, nil, bumpReplicas, cached, storage.UpdateOptions{}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	got := &widget.Widget{}
	if err := s.Get(ctx, "/widgets/ns/c", storage.GetOptions{}, got); err != nil {
		t.Fatal(err)
	}
	if got.Spec.Replicas != workers*each {
		t.Fatalf("replicas %d, want %d", got.Spec.Replicas, workers*each)
	}
}

// TestRevokedLeaseIsReplaced revokes the shared lease behind the store's
// back: the next writes with a TTL get a fresh lease instead of failing.
func TestRevokedLeaseIsReplaced(t *testing.T) {
	s := newTestStore(t)
	ctx := testCtx(t)
	if err := s.Create(ctx, "/widgets/ns/a", testWidget("a", nil), nil, 600); err != nil {
		t.Fatal(err)
	}
	id := rawGet(t, s, "/widgets/ns/a").Kvs[0].Lease
	if _, err := etcdServer.Client.Revoke(ctx, clientv3.LeaseID(id)); err != nil {
		t.Fatal(err)
	}
	if err := s.Create(ctx, "/widgets/ns/b", testWidget("b", nil), nil, 600); err != nil {
		t.Fatalf("create after the lease was revoked: %v", err)
	}
	if l := rawGet(t, s, "/widgets/ns/b").Kvs[0].Lease; l == 0 || l == id {
		t.Fatalf("new key got lease %d (revoked %d)", l, id)
	}
	if _, err := etcdServer.Client.Revoke(ctx, clientv3.LeaseID(rawGet(t, s, "/widgets/ns/b").Kvs[0].Lease)); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, "/widgets/ns/c", testWidget("c", nil))
	ttl := uint64(600)
	err := s.GuaranteedUpdate(ctx, "/widgets/ns/c", &widget.Widget{}, false, nil,
		func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
			w := in.(*widget.Widget)
			w.Spec.Replicas++
			return w, &ttl, nil
		}, nil, storage.UpdateOptions{})
	if err != nil {
		t.Fatalf("update after the lease was revoked: %v", err)
	}
	if l := rawGet(t, s, "/widgets/ns/c").Kvs[0].Lease; l == 0 {
		t.Fatal("updated key has no lease")
	}
}
