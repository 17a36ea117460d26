package cacher_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/types"

	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/internal/testapi"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/storage/etcd3"
)

// keyReads counts the etcd reads of single keys below a prefix (not the
// range reads of lists).
type keyReads struct {
	clientv3.KV
	prefix string
	n      atomic.Int64
}

func (k *keyReads) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	if strings.HasPrefix(key, k.prefix) && len(opts) == 0 {
		k.n.Add(1)
	}
	return k.KV.Get(ctx, key, opts...)
}

// A delete through the cacher of an object the cache holds up to date
// starts from the cache's copy: etcd sees the compare-and-swap and no read
// before it. A precondition that fails is still checked against etcd.
func TestDeleteStartsFromCachedObject(t *testing.T) {
	cli, err := embedtest.NewClient(etcd.Endpoints)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	if _, err := cli.Delete(testCtx(t), embedtest.Prefix(t), clientv3.WithPrefix()); err != nil {
		t.Fatal(err) // start empty when the test runs again (-count > 1)
	}
	reads := &keyReads{KV: cli.KV, prefix: embedtest.Prefix(t)}
	cli.KV = reads
	store, err := etcd3.New(etcd3.Config{Client: cli, Codec: testapi.Codec, NewFunc: testapi.NewWidget,
		NewListFunc: testapi.NewWidgetList, Prefix: embedtest.Prefix(t), ResourcePrefix: "/widgets"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	c := startCacher(t, store)
	for _, name := range []string{"a", "b"} {
		rv := create(t, c, "ns", name, nil)
		if err := c.Get(testCtx(t), key("ns", name), storage.GetOptions{ResourceVersion: rvString(rv)}, &testapi.Widget{}); err != nil {
			t.Fatal(err) // the cache holds it now
		}
	}

	before := reads.n.Load()
	out := &testapi.Widget{}
	if err := c.Delete(testCtx(t), key("ns", "a"), out, nil, nil, nil, storage.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := reads.n.Load() - before; n != 0 {
		t.Errorf("delete read the key %d times, want 0 (the cache's copy is current)", n)
	}
	if out.Name != "a" {
		t.Errorf("delete returned %q, want the deleted object a", out.Name)
	}

	before = reads.n.Load()
	wrongUID := types.UID("not-b")
	err = c.Delete(testCtx(t), key("ns", "b"), &testapi.Widget{}, &storage.Preconditions{UID: &wrongUID}, nil, nil, storage.DeleteOptions{})
	if !storage.IsCode(err, storage.CodeConflict) || !strings.Contains(err.Error(), "Precondition failed") {
		t.Fatalf("delete with a wrong UID: %v, want a precondition conflict", err)
	}
	if n := reads.n.Load() - before; n != 1 {
		t.Errorf("a precondition failing on the cache's copy read etcd %d times, want 1 (to confirm it)", n)
	}
	if err := c.Get(testCtx(t), key("ns", "b"), storage.GetOptions{}, &testapi.Widget{}); err != nil {
		t.Fatalf("b after a refused delete: %v", err)
	}
}
