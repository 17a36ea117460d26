package cacher_test

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
)

// A read at RV "0" is never older than an event the same cacher has
// already sent to a watcher: revisions become visible to reads and to
// watchers at once.
func TestReadAtZeroNotOlderThanDispatched(t *testing.T) {
	c := startCacher(t, newStore(t, embedtest.Prefix(t), false))
	from := create(t, c, "ns", "a", nil)
	w := watchAll(t, c, rvAt(from))
	defer w.Stop()
	for i := range 20 {
		bump(t, c, "ns", "a")
		ev := next(t, w, 10*time.Second)
		if ev.Type != watch.Modified {
			t.Fatalf("event %s, want MODIFIED", ev.Type)
		}
		sent := rvOf(t, ev.Object)
		list := &widget.WidgetList{}
		if err := c.GetList(testCtx(t), "/widgets", storage.ListOptions{ResourceVersion: storage.RVAny, Recursive: true}, list); err != nil {
			t.Fatal(err)
		}
		if got := rvOf(t, &list.Items[0]); got < sent {
			t.Fatalf("round %d: list at RV 0 holds a at %d after a watcher got it at %d", i, got, sent)
		}
		obj := &widget.Widget{}
		if err := c.Get(testCtx(t), key("ns", "a"), storage.GetOptions{ResourceVersion: storage.RVAny}, obj); err != nil {
			t.Fatal(err)
		}
		if got := rvOf(t, obj); got < sent {
			t.Fatalf("round %d: get at RV 0 returns a at %d after a watcher got it at %d", i, got, sent)
		}
	}
}
