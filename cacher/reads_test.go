package cacher_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/storage/counting"
)

// gatedStore blocks GetList calls until open is closed.
type gatedStore struct {
	storage.Interface
	open chan struct{}
}

func (s *gatedStore) GetList(ctx context.Context, key string, opts storage.ListOptions, obj runtime.Object) error {
	select {
	case <-s.open:
	case <-ctx.Done():
		return ctx.Err()
	}
	return s.Interface.GetList(ctx, key, opts, obj)
}

// Until the first list lands, watches answer not-ready after a bounded
// wait; lists are served by the storage.
func TestReadiness(t *testing.T) {
	raw := newStore(t, embedtest.Prefix(t), false)
	gate := &gatedStore{Interface: raw, open: make(chan struct{})}
	counted := counting.New(gate)
	c, err := cacher.New(cacher.Config{Storage: counted, ResourcePrefix: "/widgets",
		NewFunc: widget.New, NewListFunc: widget.NewList, ReadyWaitTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(runCacher(t, c))
	if err := c.ReadinessCheck(); !errors.Is(err, storage.ErrNotReady) {
		t.Fatalf("ReadinessCheck before the list: %v", err)
	}
	start := time.Now()
	if _, err := c.Watch(testCtx(t), "/widgets", storage.ListOptions{Recursive: true}); !errors.Is(err, storage.ErrNotReady) {
		t.Fatalf("Watch before the list: %v, want not ready", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("not-ready answer took %v", d)
	}
	create(t, raw, "ns", "a", nil)
	list := &widget.WidgetList{}
	done := make(chan error, 1)
	go func() { done <- c.GetList(testCtx(t), "/widgets", storage.ListOptions{Recursive: true}, list) }()
	close(gate.open) // the delegated list and the cacher's own list proceed
	if err := <-done; err != nil || len(list.Items) != 1 {
		t.Fatalf("list while not ready: %v, %d items", err, len(list.Items))
	}
	if err := c.WaitReady(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if err := c.ReadinessCheck(); err != nil {
		t.Fatalf("ReadinessCheck after the list: %v", err)
	}
}

// A list at RV "" sees every write that completed before it, served from
// memory after one current-revision read.
func TestConsistentReadFromCache(t *testing.T) {
	store := counting.New(newStore(t, embedtest.Prefix(t), false))
	c := startCacher(t, store)
	for i, n := range names(20) {
		create(t, store, "ns", n, nil) // straight to etcd
		lists, currents := store.Counts().Lists, store.Counts().CurrentRVs
		list := &widget.WidgetList{}
		if err := c.GetList(testCtx(t), "/widgets", storage.ListOptions{Recursive: true}, list); err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != i+1 {
			t.Fatalf("consistent list after %d creates holds %d items", i+1, len(list.Items))
		}
		if store.Counts().Lists != lists || store.Counts().CurrentRVs != currents+1 {
			t.Fatalf("consistent list: %d storage lists, %d current-RV reads; want 0 and 1",
				store.Counts().Lists-lists, store.Counts().CurrentRVs-currents)
		}
	}
}

// Pages served by the cache stay at the first page's RV across writes, and
// their continue tokens work on the etcd store as well.
func TestPaginationFromCache(t *testing.T) {
	raw := newStore(t, embedtest.Prefix(t), false)
	store := counting.New(raw)
	c := startCacher(t, store)
	for _, n := range names(7) {
		create(t, c, "ns", n, nil)
	}
	opts := storage.ListOptions{Recursive: true, Predicate: storage.SelectionPredicate{Limit: 3}}
	first := &widget.WidgetList{}
	if err := c.GetList(testCtx(t), "/widgets", opts, first); err != nil {
		t.Fatal(err)
	}
	if first.Continue == "" || first.RemainingItemCount == nil || *first.RemainingItemCount != 4 {
		t.Fatalf("first page: continue %q remaining %v", first.Continue, first.RemainingItemCount)
	}
	create(t, c, "ns", "w0001a", nil) // lands between pages: must not show up
	lists := store.Counts().Lists
	got := itemNames(first)
	opts.Predicate.Continue = first.Continue
	for opts.Predicate.Continue != "" {
		page := &widget.WidgetList{}
		if err := c.GetList(testCtx(t), "/widgets", opts, page); err != nil {
			t.Fatal(err)
		}
		if page.ResourceVersion != first.ResourceVersion {
			t.Fatalf("page at RV %s, first page at %s", page.ResourceVersion, first.ResourceVersion)
		}
		got = append(got, itemNames(page)...)
		opts.Predicate.Continue = page.Continue
	}
	if !slices.Equal(got, names(7)) || store.Counts().Lists != lists {
		t.Fatalf("pages %v (storage lists %d)", got, store.Counts().Lists-lists)
	}
	// The cache's token on the etcd store gives the same second page.
	opts.Predicate.Continue = first.Continue
	fromEtcd := &widget.WidgetList{}
	if err := raw.GetList(testCtx(t), "/widgets", opts, fromEtcd); err != nil {
		t.Fatalf("cache token on the etcd store: %v", err)
	}
	if !slices.Equal(itemNames(fromEtcd), names(7)[3:6]) {
		t.Fatalf("etcd page from the cache token: %v", itemNames(fromEtcd))
	}
}

func itemNames(l *widget.WidgetList) []string {
	out := make([]string, len(l.Items))
	for i := range l.Items {
		out[i] = l.Items[i].Name
	}
	return out
}
