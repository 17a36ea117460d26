package cacher_test

import (
	"fmt"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
)

// With SpacedSnapshots, an exact list at a revision more than
// DefaultMaxSnapshots revisions back, which the cache's event history still
// covers, is served by the cache (no etcd range) and equals what etcd
// answers at that revision.
func TestExactListFarBackServedFromCache(t *testing.T) {
	ctx := testCtx(t)
	store, counter := countedStore(t)
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
	exact := func(s storage.Interface, opts storage.ListOptions) *widget.WidgetList {
		t.Helper()
		opts.Recursive, opts.ResourceVersion, opts.ResourceVersionMatch = true, storage.RVAt(at), metav1.ResourceVersionMatchExact
		list := &widget.WidgetList{}
		if err := s.GetList(ctx, "/widgets", opts, list); err != nil {
			t.Fatalf("exact list at %d: %v", at, err)
		}
		return list
	}
	// Wait until the cache has the newest write, then list through it.
	if err := c.Get(ctx, key("ns", "w00"), storage.GetOptions{ResourceVersion: storage.RVAt(last)}, &widget.Widget{}); err != nil {
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
		list := &widget.WidgetList{}
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
	nameRVs := func(l *widget.WidgetList) []string {
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
