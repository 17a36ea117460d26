package cacher_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/storage/etcd3"
)

// kvRequests counts the single-key reads below a prefix, the reads below
// it that return several keys (the ranges a list sends; count-only probes
// and single-key reads return none or one) and the transactions a store
// sends to etcd. beforeTxn, when set, runs once just before the next
// transaction is sent.
type kvRequests struct {
	clientv3.KV
	prefix    string
	gets      atomic.Int64
	ranges    atomic.Int64
	txns      atomic.Int64
	beforeTxn atomic.Pointer[func()]
}

func (k *kvRequests) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	below := strings.HasPrefix(key, k.prefix)
	if below && len(opts) == 0 {
		k.gets.Add(1)
	}
	resp, err := k.KV.Get(ctx, key, opts...)
	if err == nil && below && len(resp.Kvs) > 1 {
		k.ranges.Add(1)
	}
	return resp, err
}

func (k *kvRequests) Txn(ctx context.Context) clientv3.Txn {
	if f := k.beforeTxn.Swap(nil); f != nil {
		(*f)()
	}
	k.txns.Add(1)
	return k.KV.Txn(ctx)
}

// counts returns the reads and transactions counted so far.
func (k *kvRequests) counts() (gets, txns int64) { return k.gets.Load(), k.txns.Load() }

// countedCacher starts a cacher over a Widget store whose etcd requests
// are counted, on the test's own client and prefix.
func countedCacher(t *testing.T) (*cacher.Cacher, *kvRequests) {
	t.Helper()
	store, reqs := countedStore(t)
	return startCacher(t, store), reqs
}

// countedStore is a Widget store whose etcd requests are counted, on the
// test's own client and its prefix, emptied first.
func countedStore(t *testing.T) (*etcd3.Store, *kvRequests) {
	t.Helper()
	cli, err := embedtest.NewClient(etcd.Endpoints)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	if _, err := cli.Delete(testCtx(t), embedtest.Prefix(t), clientv3.WithPrefix()); err != nil {
		t.Fatal(err) // start empty when the test runs again (-count > 1)
	}
	reqs := &kvRequests{KV: cli.KV, prefix: embedtest.Prefix(t)}
	cli.KV = reqs
	store, err := etcd3.New(etcd3.Config{Client: cli, Codec: widget.Codec, NewFunc: widget.New,
		NewListFunc: widget.NewList, Prefix: embedtest.Prefix(t), ResourcePrefix: "/widgets"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	return store, reqs
}

// createCached creates ns/name through c with ttl and waits until the
// cache holds it.
func createCached(t *testing.T, c *cacher.Cacher, ns, name string, ttl uint64) uint64 {
	t.Helper()
	out := &widget.Widget{}
	if err := c.Create(testCtx(t), key(ns, name), widget.NewWidget(ns, name).WithLabels(map[string]string{"app": "x"}), out, ttl); err != nil {
		t.Fatalf("create %s/%s: %v", ns, name, err)
	}
	rv := rvOf(t, out)
	if err := c.Get(testCtx(t), key(ns, name), storage.GetOptions{ResourceVersion: storage.RVAt(rv)}, &widget.Widget{}); err != nil {
		t.Fatal(err) // the cache holds it now
	}
	return rv
}

// etcdLease returns the lease etcd has attached to ns/name of the test's
// prefix (0 if none).
func etcdLease(t *testing.T, ns, name string) int64 {
	t.Helper()
	resp, err := etcd.Client.Get(testCtx(t), embedtest.Prefix(t), clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range resp.Kvs {
		if strings.HasSuffix(string(kv.Key), "/"+ns+"/"+name) {
			return kv.Lease
		}
	}
	t.Fatalf("%s/%s not in etcd", ns, name)
	return 0
}

// bumpReplicas is an UpdateFunc that increments replicas and keeps the lease.
func bumpReplicas(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
	w := in.(*widget.Widget).DeepCopy()
	w.Spec.Replicas++
	return w, nil, nil
}

// An update through the cacher of an object the cache holds up to date
// starts from the cache's copy: etcd sees the compare-and-swap and no read
// before it.
func TestUpdateStartsFromCachedObject(t *testing.T) {
	c, reqs := countedCacher(t)
	createCached(t, c, "ns", "a", 0)

	gets0, txns0 := reqs.counts()
	out := &widget.Widget{}
	if err := c.GuaranteedUpdate(testCtx(t), key("ns", "a"), out, false, nil, bumpReplicas, nil, storage.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	gets, txns := reqs.counts()
	if gets-gets0 != 0 || txns-txns0 != 1 {
		t.Errorf("update sent %d reads and %d transactions, want 0 and 1 (the cache's copy is current)", gets-gets0, txns-txns0)
	}
	if out.Name != "a" || out.Spec.Replicas != 1 {
		t.Errorf("update returned %s with replicas %d, want a with 1", out.Name, out.Spec.Replicas)
	}
}

// A key with a lease: an update that starts from the cache's copy (which
// knows no TTL) fails the lease compare and runs tryUpdate again on the
// stored state, so tryUpdate sees the real TTL and an update that keeps
// the TTL it was told keeps the lease.
func TestUpdateFromCacheKeepsTTL(t *testing.T) {
	c, reqs := countedCacher(t)
	createCached(t, c, "ns", "a", 300)
	const maxTTL = 300 + 15 // the lease manager may grant 5% longer, to share a lease
	lease := etcdLease(t, "ns", "a")
	if lease == 0 {
		t.Fatal("created with a TTL but etcd shows no lease")
	}

	var lastTTL atomic.Int64
	keepTold := func(in runtime.Object, res storage.ResponseMeta) (runtime.Object, *uint64, error) {
		lastTTL.Store(res.TTL)
		w := in.(*widget.Widget).DeepCopy()
		w.Spec.Replicas++
		ttl := uint64(res.TTL) // the registry's way: keep the TTL the object has
		return w, &ttl, nil
	}
	if err := c.GuaranteedUpdate(testCtx(t), key("ns", "a"), &widget.Widget{}, false, nil, keepTold, nil, storage.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if ttl := lastTTL.Load(); ttl <= 0 || ttl > maxTTL {
		t.Errorf("tryUpdate was told TTL %d, want the key's remaining TTL (0 < ttl <= %d)", ttl, maxTTL)
	}
	if l := etcdLease(t, "ns", "a"); l == 0 {
		t.Errorf("an update passing on the TTL it was told dropped the key's lease")
	}

	// Let the cache see that update, then update with a nil TTL.
	out := &widget.Widget{}
	if err := c.Get(testCtx(t), key("ns", "a"), storage.GetOptions{}, out); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(testCtx(t), key("ns", "a"), storage.GetOptions{ResourceVersion: mustRV(t, out.ResourceVersion)}, &widget.Widget{}); err != nil {
		t.Fatal(err)
	}
	before := etcdLease(t, "ns", "a")
	lastTTL.Store(-1)
	keepLease := func(in runtime.Object, res storage.ResponseMeta) (runtime.Object, *uint64, error) {
		lastTTL.Store(res.TTL)
		return bumpReplicas(in, res)
	}
	gets0, _ := reqs.counts()
	if err := c.GuaranteedUpdate(testCtx(t), key("ns", "a"), out, false, nil, keepLease, nil, storage.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if ttl := lastTTL.Load(); ttl <= 0 || ttl > maxTTL {
		t.Errorf("tryUpdate was told TTL %d, want the key's remaining TTL (0 < ttl <= %d)", ttl, maxTTL)
	}
	if l := etcdLease(t, "ns", "a"); l != before {
		t.Errorf("an update with a nil TTL changed the lease from %x to %x", before, l)
	}
	if gets, _ := reqs.counts(); gets != gets0 {
		t.Errorf("update read the key %d times, want 0 (the failed compare returns the state)", gets-gets0)
	}
	if out.Spec.Replicas != 2 {
		t.Errorf("replicas %d after two updates, want 2", out.Spec.Replicas)
	}
}

// When etcd moves on after the update took the cache's copy, the
// compare-and-swap fails and tryUpdate runs again on the state the failed
// transaction returned, so no change is lost.
func TestUpdateFromStaleCacheRetries(t *testing.T) {
	c, reqs := countedCacher(t)
	createCached(t, c, "ns", "a", 0)
	other, err := etcd3.New(etcd3.Config{Client: etcd.Client, Codec: widget.Codec, NewFunc: widget.New,
		NewListFunc: widget.NewList, Prefix: embedtest.Prefix(t), ResourcePrefix: "/widgets"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(other.Close) // same keys, another client
	var bumpErr error
	bumpOther := func() {
		bumpErr = other.GuaranteedUpdate(testCtx(t), key("ns", "a"), &widget.Widget{}, false, nil, bumpReplicas, nil, storage.UpdateOptions{})
	}
	reqs.beforeTxn.Store(&bumpOther)

	var seen []int64
	label := func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
		w := in.(*widget.Widget).DeepCopy()
		seen = append(seen, w.Spec.Replicas)
		w.Labels["updated"] = "yes"
		return w, nil, nil
	}
	gets0, txns0 := reqs.counts()
	out := &widget.Widget{}
	if err := c.GuaranteedUpdate(testCtx(t), key("ns", "a"), out, false, nil, label, nil, storage.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if bumpErr != nil {
		t.Fatalf("the concurrent update: %v", bumpErr)
	}
	if len(seen) != 2 || seen[0] != 0 || seen[1] != 1 {
		t.Errorf("tryUpdate saw replicas %v, want [0 1] (the cache's copy, then etcd's)", seen)
	}
	if out.Spec.Replicas != 1 || out.Labels["updated"] != "yes" {
		t.Errorf("result has replicas %d and labels %v, want both updates", out.Spec.Replicas, out.Labels)
	}
	gets, txns := reqs.counts()
	if gets-gets0 != 0 || txns-txns0 != 2 {
		t.Errorf("update sent %d reads and %d transactions, want 0 and 2", gets-gets0, txns-txns0)
	}
}

// tryUpdate may change the object it is given; the cache's copy stays as
// it was.
func TestUpdateMutatingInputLeavesCacheAlone(t *testing.T) {
	c, _ := countedCacher(t)
	rv := createCached(t, c, "ns", "a", 0)
	refuse := errors.New("refused after scribbling")
	scribble := func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
		w := in.(*widget.Widget)
		w.Labels["app"] = "scribbled"
		w.Spec.Replicas = 42
		return nil, nil, refuse
	}
	if err := c.GuaranteedUpdate(testCtx(t), key("ns", "a"), &widget.Widget{}, false, nil, scribble, nil, storage.UpdateOptions{}); !errors.Is(err, refuse) {
		t.Fatalf("update: %v, want the tryUpdate error", err)
	}
	got := &widget.Widget{}
	if err := c.Get(testCtx(t), key("ns", "a"), storage.GetOptions{ResourceVersion: storage.RVAt(rv)}, got); err != nil {
		t.Fatal(err)
	}
	if got.Labels["app"] != "x" || got.Spec.Replicas != 0 {
		t.Errorf("cache's object changed by tryUpdate: labels %v, replicas %d", got.Labels, got.Spec.Replicas)
	}
}

// An update through the cacher whose result is the object the cache holds
// up to date (a re-applied patch) is settled by one read-only transaction
// comparing etcd's revision and value: no read, tryUpdate once, no new
// revision.
func TestNoopUpdateFromCacheIsOneTxn(t *testing.T) {
	c, reqs := countedCacher(t)
	rv := createCached(t, c, "ns", "a", 0)

	calls := 0
	reapply := func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
		calls++
		w := in.(*widget.Widget)
		w.Labels["app"] = "x" // already so
		return w, nil, nil
	}
	gets0, txns0 := reqs.counts()
	out := &widget.Widget{}
	if err := c.GuaranteedUpdate(testCtx(t), key("ns", "a"), out, false, nil, reapply, nil, storage.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	gets, txns := reqs.counts()
	if gets-gets0 != 0 || txns-txns0 != 1 || calls != 1 {
		t.Errorf("no-op update sent %d reads and %d transactions, ran tryUpdate %d times; want 0, 1, 1",
			gets-gets0, txns-txns0, calls)
	}
	if got := rvOf(t, out); got != rv || out.Labels["app"] != "x" {
		t.Errorf("update returned rv %d labels %v, want the stored object at rv %d", got, out.Labels, rv)
	}
}

// markRecorder is a storage that records whether the updates and deletes
// it is given say SuggestionDecoded in their options.
type markRecorder struct {
	storage.Interface
	marks []bool
}

func (m *markRecorder) GuaranteedUpdate(ctx context.Context, key string, dest runtime.Object, ignoreNotFound bool,
	pre *storage.Preconditions, tryUpdate storage.UpdateFunc, suggestion runtime.Object, opts storage.UpdateOptions) error {
	m.marks = append(m.marks, opts.SuggestionDecoded)
	return m.Interface.GuaranteedUpdate(ctx, key, dest, ignoreNotFound, pre, tryUpdate, suggestion, opts)
}

func (m *markRecorder) Delete(ctx context.Context, key string, out runtime.Object, pre *storage.Preconditions,
	validate storage.ValidateObjectFunc, suggestion runtime.Object, opts storage.DeleteOptions) error {
	m.marks = append(m.marks, opts.SuggestionDecoded)
	return m.Interface.Delete(ctx, key, out, pre, validate, suggestion, opts)
}

// A cacher keeping decoded objects marks the suggestions it takes from the
// cache as the storage's own decodings (so the storage may copy rather
// than decode them again); it does not mark a write of a key the cache
// does not hold.
func TestCacheSuggestionsAreMarkedDecoded(t *testing.T) {
	if marks := recordSuggestionMarks(t); !slices.Equal(marks, []bool{false, true, true}) {
		t.Errorf("updates and delete marked %v, want [false true true]", marks)
	}
}

// A cacher keeping encodings does not mark its suggestions: it decodes
// them with its own codec.
func TestEncodedCacheSuggestionsAreNotMarked(t *testing.T) {
	if marks := recordSuggestionMarks(t, keepEncoded(widget.Codec)); !slices.Equal(marks, []bool{false, false, false}) {
		t.Errorf("updates and delete marked %v, want [false false false]", marks)
	}
}

// recordSuggestionMarks writes through a cacher (mod applied) and returns
// the marks its storage saw: an update of a key the cache does not hold,
// then an update and a delete of a key it holds up to date.
func recordSuggestionMarks(t *testing.T, mod ...func(*cacher.Config)) []bool {
	t.Helper()
	rec := &markRecorder{Interface: newStore(t, embedtest.Prefix(t), false)}
	c := startCacher(t, rec, mod...)
	makeB := func(runtime.Object, storage.ResponseMeta) (runtime.Object, *uint64, error) {
		return widget.NewWidget("ns", "b"), nil, nil
	}
	if err := c.GuaranteedUpdate(testCtx(t), key("ns", "b"), &widget.Widget{}, true, nil, makeB, nil, storage.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	createCached(t, c, "ns", "a", 0)
	out := &widget.Widget{}
	if err := c.GuaranteedUpdate(testCtx(t), key("ns", "a"), out, false, nil, bumpReplicas, nil, storage.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(testCtx(t), key("ns", "a"), storage.GetOptions{ResourceVersion: mustRV(t, out.ResourceVersion)}, &widget.Widget{}); err != nil {
		t.Fatal(err) // the cache holds the update
	}
	if err := c.Delete(testCtx(t), key("ns", "a"), &widget.Widget{}, nil, nil, nil, storage.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	return rec.marks
}
