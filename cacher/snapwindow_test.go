package cacher_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/internal/testapi"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/storage/etcd3"
)

// rangeCounter counts the reads below a prefix that return several keys:
// the ranges a list sends (count-only probes and single-key reads return
// none or one).
type rangeCounter struct {
	clientv3.KV
	prefix string
	ranges atomic.Int64
}

func (k *rangeCounter) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	resp, err := k.KV.Get(ctx, key, opts...)
	if err == nil && strings.HasPrefix(key, k.prefix) && len(resp.Kvs) > 1 {
		k.ranges.Add(1)
	}
	return resp, err
}

// With SpacedSnapshots, an exact list at a revision more than
// DefaultMaxSnapshots revisions back, which the cache's event history still
// covers, is served by the cache (no etcd range) and equals what etcd
// answers at that revision.
func TestExactListFarBackServedFromCache(t *testing.T) {
	cli, err := embedtest.NewClient(etcd.Endpoints)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	ctx := testCtx(t)
	if _, err := cli.Delete(ctx, embedtest.Prefix(t), clientv3.WithPrefix()); err != nil {
		t.Fatal(err)
	}
	counter := &rangeCounter{KV: cli.KV, prefix: embedtest.Prefix(t)}
	cli.KV = counter
	store, err := etcd3.New(etcd3.Config{Client: cli, Codec: testapi.Codec, NewFunc: testapi.NewWidget,
		NewListFunc: testapi.NewWidgetList, Prefix: embedtest.Prefix(t), ResourcePrefix: "/widgets"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	c := startCacher(t, store, func(cfg *cacher.Config) { cfg.ConsistencyCheckInterval, cfg.SpacedSnapshots = -1, true })

	const objects, writes = 50, 1200
	for i := range objects {
		create(t, c, "ns", fmt.Sprintf("w%02d", i), nil)
	}
	var at, last uint64
	for i := range writes {
		last = bump(t, store, "ns", fmt.Sprintf("w%02d", i%objects))
		if i == 20 {
			at = last
		}
	}
	if last-at <= 1024 {
		t.Fatalf("only %d revisions between the listed one and the newest", last-at)
	}
	exact := func(s storage.Interface, opts storage.ListOptions) *testapi.WidgetList {
		t.Helper()
		opts.Recursive, opts.ResourceVersion, opts.ResourceVersionMatch = true, rvString(at), metav1.ResourceVersionMatchExact
		list := &testapi.WidgetList{}
		if err := s.GetList(ctx, "/widgets", opts, list); err != nil {
			t.Fatalf("exact list at %d: %v", at, err)
		}
		return list
	}
	// Wait until the cache has the newest write, then list through it.
	if err := c.Get(ctx, key("ns", "w00"), storage.GetOptions{ResourceVersion: rvString(last)}, &testapi.Widget{}); err != nil {
		t.Fatal(err)
	}
	before := counter.ranges.Load()
	got := exact(c, storage.ListOptions{})
	paged := exact(c, storage.ListOptions{Predicate: storage.SelectionPredicate{Limit: 7}})
	var pagedNames []string
	for _, w := range paged.Items {
		pagedNames = append(pagedNames, w.Name+"@"+w.ResourceVersion)
	}
	for paged.Continue != "" {
		list := &testapi.WidgetList{}
		opts := storage.ListOptions{Recursive: true, Predicate: storage.SelectionPredicate{Limit: 7, Continue: paged.Continue}}
		if err := c.GetList(ctx, "/widgets", opts, list); err != nil {
			t.Fatalf("next page at %d: %v", at, err)
		}
		for _, w := range list.Items {
			pagedNames = append(pagedNames, w.Name+"@"+w.ResourceVersion)
		}
		paged = list
	}
	if n := counter.ranges.Load() - before; n != 0 {
		t.Errorf("exact lists %d revisions back sent %d ranges to etcd, want 0 (the cache holds the revision)", last-at, n)
	}
	want := exact(store, storage.ListOptions{})
	if counter.ranges.Load() == before {
		t.Fatal("the storage's list was not counted: the counter misses ranges")
	}
	nameRVs := func(l *testapi.WidgetList) []string {
		var out []string
		for _, w := range l.Items {
			out = append(out, w.Name+"@"+w.ResourceVersion)
		}
		return out
	}
	if g, w := nameRVs(got), nameRVs(want); !slices.Equal(g, w) || got.ResourceVersion != want.ResourceVersion {
		t.Errorf("cache's exact list at %d: %v at %s, etcd's: %v at %s", at, g, got.ResourceVersion, w, want.ResourceVersion)
	}
	if w := nameRVs(want); !slices.Equal(pagedNames, w) {
		t.Errorf("cache's exact list at %d by pages: %v, etcd's: %v", at, pagedNames, w)
	}
}
