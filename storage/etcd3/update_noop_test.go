package etcd3

import (
	"bytes"
	"context"
	"sync/atomic"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/storage/value"
)

// countedKV counts the reads and transactions a store sends to etcd.
type countedKV struct {
	clientv3.KV
	gets, txns atomic.Int64
}

func (k *countedKV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	k.gets.Add(1)
	return k.KV.Get(ctx, key, opts...)
}

func (k *countedKV) Txn(ctx context.Context) clientv3.Txn {
	k.txns.Add(1)
	return k.KV.Txn(ctx)
}

// countRequests makes s count its reads and transactions from now on.
func countRequests(s *Store) *countedKV {
	k := &countedKV{KV: s.kv.kv}
	s.kv.kv = k
	return k
}

// unchanged is an UpdateFunc that returns its input as it is, counting calls.
func unchanged(calls *int) storage.UpdateFunc {
	return func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
		*calls++
		return in, nil, nil
	}
}

// An update from a current suggestion whose result is the suggestion is a
// no-op settled by one read-only transaction: no read, tryUpdate once, no
// new revision, the stored object returned at its revision.
func TestNoopUpdateOfCurrentSuggestionIsOneTxn(t *testing.T) {
	s := newTestStore(t)
	ctx := testCtx(t)
	cached := mustCreate(t, s, "/widgets/ns/a", testWidget("a", map[string]string{"app": "x"}))
	rv := rvOf(t, cached)
	reqs := countRequests(s)
	before := currentRev(t)

	calls := 0
	out := &widget.Widget{}
	if err := s.GuaranteedUpdate(ctx, "/widgets/ns/a", out, false, nil, unchanged(&calls), cached, storage.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if gets, txns := reqs.gets.Load(), reqs.txns.Load(); gets != 0 || txns != 1 || calls != 1 {
		t.Errorf("no-op update: %d reads, %d transactions, tryUpdate %d times; want 0, 1, 1", gets, txns, calls)
	}
	if after := currentRev(t); after != before {
		t.Errorf("a no-op update moved etcd from revision %d to %d", before, after)
	}
	if got := rvOf(t, out); got != rv || out.Name != "a" || out.Labels["app"] != "x" {
		t.Errorf("returned %s rv %d labels %v, want a rv %d labels app=x", out.Name, got, out.Labels, rv)
	}
}

// A suggestion that etcd has moved past, on which the update is a no-op,
// is not taken for the stored state: the confirming transaction fails,
// returns the stored state, and the update runs on it and is written.
func TestNoopUpdateOfStaleSuggestionWrites(t *testing.T) {
	s := newTestStore(t)
	ctx := testCtx(t)
	cached := mustCreate(t, s, "/widgets/ns/a", testWidget("a", map[string]string{"app": "x"}))
	relabel := func(v string) storage.UpdateFunc {
		return func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
			in.(*widget.Widget).Labels["app"] = v
			return in, nil, nil
		}
	}
	if err := s.GuaranteedUpdate(ctx, "/widgets/ns/a", &widget.Widget{}, false, nil, relabel("y"), nil, storage.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	reqs := countRequests(s)

	out := &widget.Widget{}
	if err := s.GuaranteedUpdate(ctx, "/widgets/ns/a", out, false, nil, relabel("x"), cached, storage.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if gets, txns := reqs.gets.Load(), reqs.txns.Load(); gets != 0 || txns != 2 {
		t.Errorf("%d reads and %d transactions, want 0 and 2 (confirm, write)", gets, txns)
	}
	if out.Labels["app"] != "x" {
		t.Errorf("returned labels %v, want app=x", out.Labels)
	}
	stored := &widget.Widget{}
	if err := s.Get(ctx, "/widgets/ns/a", storage.GetOptions{}, stored); err != nil {
		t.Fatal(err)
	}
	if stored.Labels["app"] != "x" || stored.ResourceVersion != out.ResourceVersion {
		t.Errorf("etcd holds labels %v at rv %s, want app=x at the returned rv %s", stored.Labels, stored.ResourceVersion, out.ResourceVersion)
	}
}

// A stored value that decodes to the suggestion but is encoded otherwise
// (another writer's formatting) is rewritten by a no-op update, as after a
// fresh read: the value compare fails.
func TestNoopUpdateRewritesForeignEncoding(t *testing.T) {
	s := newTestStore(t)
	ctx := testCtx(t)
	mustCreate(t, s, "/widgets/ns/a", testWidget("a", nil))
	kv := rawGet(t, s, "/widgets/ns/a").Kvs[0]
	foreign := append(append([]byte{}, kv.Value...), ' ', '\n')
	if _, err := etcdServer.Client.Put(ctx, string(kv.Key), string(foreign)); err != nil {
		t.Fatal(err)
	}
	cached := &widget.Widget{}
	if err := s.Get(ctx, "/widgets/ns/a", storage.GetOptions{}, cached); err != nil {
		t.Fatal(err)
	}
	reqs := countRequests(s)

	calls := 0
	out := &widget.Widget{}
	if err := s.GuaranteedUpdate(ctx, "/widgets/ns/a", out, false, nil, unchanged(&calls), cached, storage.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	now := rawGet(t, s, "/widgets/ns/a").Kvs[0]
	if bytes.Equal(now.Value, foreign) || now.ModRevision == rvOfInt(t, cached) {
		t.Errorf("the foreign encoding was not rewritten (mod revision %d)", now.ModRevision)
	}
	if rvOfInt(t, out) != now.ModRevision {
		t.Errorf("returned rv %d, want the rewrite's %d", rvOfInt(t, out), now.ModRevision)
	}
	if gets, txns := reqs.gets.Load(), reqs.txns.Load(); gets != 0 || txns != 2 || calls != 2 {
		t.Errorf("%d reads, %d transactions, tryUpdate %d times; want 0, 2 (confirm, write), 2", gets, txns, calls)
	}
}

// With a transformer that encrypts with a random nonce the value compare
// cannot hold; the update is still settled as a no-op on the state the
// transaction returned, without a write.
func TestNoopUpdateWithRandomizedTransformer(t *testing.T) {
	s := aesStore(t, uniquePrefix(t), value.AESGCMKey{Name: "k1", Secret: secret(1)})
	ctx := testCtx(t)
	cached := mustCreate(t, s, "/widgets/ns/a", testWidget("a", map[string]string{"app": "x"}))
	before := currentRev(t)
	reqs := countRequests(s)

	calls := 0
	out := &widget.Widget{}
	if err := s.GuaranteedUpdate(ctx, "/widgets/ns/a", out, false, nil, unchanged(&calls), cached, storage.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if after := currentRev(t); after != before {
		t.Errorf("a no-op update moved etcd from revision %d to %d", before, after)
	}
	if rvOf(t, out) != rvOf(t, cached) || out.Labels["app"] != "x" {
		t.Errorf("returned rv %s labels %v, want the created object", out.ResourceVersion, out.Labels)
	}
	if gets, txns := reqs.gets.Load(), reqs.txns.Load(); gets != 0 || txns != 1 {
		t.Errorf("%d reads and %d transactions, want 0 and 1 (the failed compare returns the state)", gets, txns)
	}
}

func rvOfInt(t testing.TB, obj runtime.Object) int64 { return int64(rvOf(t, obj)) }

// The same bytes written again after the suggestion (a newer revision with
// an equal value) pass the value compare, but the update is not settled on
// the suggestion: it returns the stored object at its current revision.
func TestNoopUpdateOfRewrittenValueReturnsCurrentRevision(t *testing.T) {
	s := newTestStore(t)
	ctx := testCtx(t)
	cached := mustCreate(t, s, "/widgets/ns/a", testWidget("a", nil))
	kv := rawGet(t, s, "/widgets/ns/a").Kvs[0]
	put, err := etcdServer.Client.Put(ctx, string(kv.Key), string(kv.Value))
	if err != nil {
		t.Fatal(err)
	}
	before := currentRev(t)

	calls := 0
	out := &widget.Widget{}
	if err := s.GuaranteedUpdate(ctx, "/widgets/ns/a", out, false, nil, unchanged(&calls), cached, storage.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if got := rvOfInt(t, out); got != put.Header.Revision {
		t.Errorf("returned rv %d, want the current mod revision %d (the suggestion's was %d)", got, put.Header.Revision, kv.ModRevision)
	}
	if after := currentRev(t); after != before || calls != 2 {
		t.Errorf("etcd moved from revision %d to %d, tryUpdate ran %d times; want no write, twice", before, after, calls)
	}
}

// A key with a lease: a no-op computed on a suggestion (told TTL 0, as
// Kubernetes tells it) is settled by the one transaction; nothing is
// written, so the key keeps its lease.
func TestNoopUpdateOfLeasedKeyKeepsLease(t *testing.T) {
	s := newTestStore(t)
	ctx := testCtx(t)
	cached := &widget.Widget{}
	if err := s.Create(ctx, "/widgets/ns/a", testWidget("a", nil), cached, 600); err != nil {
		t.Fatal(err)
	}
	lease := rawGet(t, s, "/widgets/ns/a").Kvs[0].Lease
	if lease == 0 {
		t.Fatal("created with a TTL but etcd shows no lease")
	}
	before := currentRev(t)
	reqs := countRequests(s)
	calls := 0
	out := &widget.Widget{}
	if err := s.GuaranteedUpdate(ctx, "/widgets/ns/a", out, false, nil, unchanged(&calls), cached, storage.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if gets, txns := reqs.gets.Load(), reqs.txns.Load(); gets != 0 || txns != 1 || calls != 1 {
		t.Errorf("%d reads, %d transactions, tryUpdate %d times; want 0, 1, 1", gets, txns, calls)
	}
	if after := currentRev(t); after != before || out.ResourceVersion != cached.ResourceVersion {
		t.Errorf("etcd moved from revision %d to %d, returned rv %s; want no write, rv %s", before, after, out.ResourceVersion, cached.ResourceVersion)
	}
	if now := rawGet(t, s, "/widgets/ns/a").Kvs[0].Lease; now != lease {
		t.Errorf("the key's lease went from %x to %x", lease, now)
	}
}
