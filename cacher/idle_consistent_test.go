package cacher_test

import (
	"testing"
	"time"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/storage/counting"
)

// TestConsistentListOnIdleCacher: on a store with no writes under the
// prefix (only one elsewhere in etcd), a consistent list is served from the
// cache well before ConsistentReadTimeout, without delegating to storage:
// the etcd3 store's progress notifications must reach the cache's watch.
func TestConsistentListOnIdleCacher(t *testing.T) {
	prefix := etcdPrefix(t) + "/"
	store := counting.New(newStore(t, prefix, false))
	if err := store.Create(testCtx(t), "/widgets/ns/a", widget.NewWidget("ns", "a"), nil, 0); err != nil {
		t.Fatal(err)
	}
	c := startCacher(t, store)
	// Move etcd's revision without touching the resource.
	if _, err := etcd.Client.Put(testCtx(t), prefix+"elsewhere", "x"); err != nil {
		t.Fatal(err)
	}
	before := store.Counts().Lists
	start := time.Now()
	l := &widget.WidgetList{}
	if err := c.GetList(testCtx(t), "/widgets", storage.ListOptions{Recursive: true, Predicate: storage.Everything}, l); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	if n := store.Counts().Lists - before; n != 0 {
		t.Fatalf("consistent list went to storage (%d GetList calls) after %v", n, took)
	}
	if took > 2*time.Second {
		t.Fatalf("consistent list on an idle cacher took %v", took)
	}
	if len(l.Items) != 1 {
		t.Fatalf("list has %d items, want 1", len(l.Items))
	}
}
