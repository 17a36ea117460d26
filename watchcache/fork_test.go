package watchcache

import (
	"errors"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/storage"
)

// A fork holds the state at the cache's RV, with no history, and goes its
// own way: what is applied to one is not seen by the other.
func TestFork(t *testing.T) {
	c, _ := newTestCache(t, nil)
	if _, ok := c.Fork(); ok {
		t.Fatal("a cache that is not ready forked")
	}
	if err := c.Replace([]runtime.Object{testWidget("ns", "a", 5, nil), testWidget("ns", "b", 6, nil)}, 10); err != nil {
		t.Fatal(err)
	}
	mustApply(t, c, "mod", testWidget("ns", "a", 11, nil), 11)
	c.UpdateRV(11)
	f, ok := c.Fork()
	if !ok {
		t.Fatal("a ready cache at a whole revision did not fork")
	}
	if rv, ready := f.RV(); rv != 11 || !ready || f.Oldest() != 11 {
		t.Fatalf("fork at RV %d (ready %v, oldest %d), want 11, ready, oldest 11", rv, ready, f.Oldest())
	}
	if _, _, err := f.EventsSince(10, 0); !errors.Is(err, storage.ErrGone) {
		t.Fatalf("the fork replays history before it: %v", err)
	}
	ev := mustApply(t, f, "del", testWidget("ns", "a", 12, nil), 12)
	if ev.Prev == nil || ev.Prev.RV != 11 {
		t.Fatalf("the fork's event has previous state %v, want a@11", ev.Prev)
	}
	mustApply(t, c, "add", testWidget("ns", "c", 12, nil), 12)
	c.UpdateRV(12)
	f.UpdateRV(12)
	for _, x := range []struct {
		c    *Cache
		want []string
	}{{c, []string{"/widgets/ns/a", "/widgets/ns/b", "/widgets/ns/c"}}, {f, []string{"/widgets/ns/b"}}} {
		res, err := x.c.List(0, NotOlderThan, ListOptions{Key: "/widgets/", Recursive: true})
		if err != nil {
			t.Fatal(err)
		}
		if got := keys(res.Items); !slices.Equal(got, x.want) {
			t.Errorf("state %v, want %v", got, x.want)
		}
	}
	mustApply(t, c, "add", testWidget("ns", "d", 13, nil), 13) // c is now in the middle of revision 13
	if _, ok := c.Fork(); ok {
		t.Error("a cache holding part of a revision forked")
	}
}
