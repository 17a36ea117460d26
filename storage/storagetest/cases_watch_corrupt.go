package storagetest

import (
	"fmt"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/storage"
)

var watchCorruptCases = []Case{
	{"WatchCorruptValueDoesNotFreeze", testWatchCorruptNoFreeze},
}

// An undecodable value written behind the store's back (a failing
// transformer, a bad write) must not freeze anything: a watch that meets it
// gets an error event in bounded time; once the value is deleted with
// IgnoreStoreReadError, reads at later RVs are served, never answer "too
// large resource version" and never show the deleted object, and new
// watches see what follows. (A cache that retried its storage watch from
// the undecodable revision forever used to fail every step after the
// first.)
func testWatchCorruptNoFreeze(t *testing.T, e *Env) {
	e.mustCreate(t, "ns", "foo", nil)
	from := rvAt(rvOf(t, e.mustCreate(t, "ns", "bar", nil)))
	w := e.mustWatch(t, e.ResourcePrefix, storage.ListOptions{ResourceVersion: from, Recursive: true})
	fooKey := e.key("ns", "foo")
	e.putCorrupt(t, fooKey)
	for {
		ev := w.next()
		if ev.Type == watch.Error {
			break
		}
		if ev.Type != watch.Bookmark {
			t.Fatalf("watch delivered %s %s instead of an error event for the undecodable value", ev.Type, describe(ev.Object))
		}
	}

	if err := e.Store.Delete(ctx(t), fooKey, e.empty(), nil, nil, nil,
		storage.DeleteOptions{IgnoreStoreReadError: true}); err != nil {
		t.Fatalf("Delete with IgnoreStoreReadError: %v", err)
	}
	bazRV := rvAt(rvOf(t, e.mustCreate(t, "ns", "baz", nil)))
	eventually(t, "reads at baz's RV without foo", func() (bool, string) {
		if err := e.Store.Get(ctx(t), e.key("ns", "baz"), storage.GetOptions{ResourceVersion: bazRV}, e.empty()); err != nil {
			return false, fmt.Sprintf("Get of baz at RV %s: %v", bazRV, err)
		}
		for _, rv := range []storage.RV{storage.RVAny, {}} {
			list := e.emptyList()
			if err := e.Store.GetList(ctx(t), e.ResourcePrefix, storage.ListOptions{ResourceVersion: rv,
				Recursive: true, Predicate: storage.Everything}, list); err != nil {
				return false, fmt.Sprintf("list at RV %q: %v", rv, err)
			}
			if got := names(t, items(t, list)); !slices.Equal(got, []string{"ns/bar", "ns/baz"}) {
				return false, fmt.Sprintf("list at RV %q holds %v, want [ns/bar ns/baz]", rv, got)
			}
		}
		return true, ""
	})
	w2 := e.mustWatch(t, e.ResourcePrefix, storage.ListOptions{ResourceVersion: bazRV, Recursive: true})
	e.mustCreate(t, "ns", "qux", nil)
	w2.expect(watch.Added, "ns", "qux")
}
