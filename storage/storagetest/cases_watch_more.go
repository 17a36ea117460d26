package storagetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/storage"
)

var watchMoreCases = []Case{
	{"WatchFromZeroAfterCompaction", testWatchFromZeroCompacted},
	{"WatchFromZeroSingleKey", testWatchFromZeroSingleKey},
	{"WatchTTLExpiryDeletes", testWatchTTLExpiry},
	{"WatchManyWatchersSameEvents", testWatchMany},
	{"ListExactFutureResourceVersion", testListExactFuture},
	{"WatchBookmarkFollowsEarlierEvents", testWatchBookmarkPromise},
	{"WatchDeadlineBookmark", testWatchDeadlineBookmark},
	{"ListNamespaceScopedPaging", testListNamespacePaging},
}

func testWatchFromZeroCompacted(t *testing.T, e *Env) {
	e.mustCreate(t, "ns", "a", nil)
	e.mustBump(t, e.key("ns", "a"))
	a3 := e.mustBump(t, e.key("ns", "a"))
	e.compact(t)
	w := e.mustWatch(t, e.ResourcePrefix, allOpts(storage.RVAny))
	w.converge(map[string]int64{"ns/a": rvOf(t, a3)})
	a4 := e.mustBump(t, e.key("ns", "a"))
	w.expectAt(watch.Modified, "ns", "a", rvOf(t, a4))
}

func testWatchFromZeroSingleKey(t *testing.T, e *Env) {
	a := e.mustCreate(t, "ns", "a", nil)
	e.mustCreate(t, "ns", "ab", nil)
	w := e.mustWatch(t, e.key("ns", "a"), storage.ListOptions{ResourceVersion: storage.RVAny, Predicate: storage.Everything})
	w.converge(map[string]int64{"ns/a": rvOf(t, a)})
	e.mustBump(t, e.key("ns", "ab"))
	a2 := e.mustBump(t, e.key("ns", "a"))
	w.expectAt(watch.Modified, "ns", "a", rvOf(t, a2))
}

func testWatchTTLExpiry(t *testing.T, e *Env) {
	w := e.mustWatch(t, e.ResourcePrefix, allOpts(rvAt(e.etcdRev(t))))
	key := e.key("ns", "ttl")
	out := e.empty()
	if err := e.Store.Create(ctx(t), key, e.newObj("ns", "ttl", nil), out, 1); err != nil {
		t.Fatalf("Create with ttl: %v", err)
	}
	w.expectAt(watch.Added, "ns", "ttl", rvOf(t, out))
	ev := w.expect(watch.Deleted, "ns", "ttl")
	if rvOf(t, ev.Object) <= rvOf(t, out) {
		t.Fatalf("DELETED on expiry at RV %d, not after the create at %d", rvOf(t, ev.Object), rvOf(t, out))
	}
}

func testWatchMany(t *testing.T, e *Env) {
	from := rvAt(e.etcdRev(t))
	var ws []*watcher
	for range 5 {
		ws = append(ws, e.mustWatch(t, e.ResourcePrefix, allOpts(from)))
	}
	var want []int64
	for i := range 10 {
		name := fmt.Sprintf("o%d", i%3)
		var obj runtime.Object
		if i < 3 {
			obj = e.mustCreate(t, "ns", name, nil)
		} else {
			obj = e.mustBump(t, e.key("ns", name))
		}
		want = append(want, rvOf(t, obj))
	}
	for n, w := range ws {
		for i, rv := range want {
			ev := w.nextObject()
			if ev.Type == watch.Error || rvOf(t, ev.Object) != rv {
				t.Fatalf("watcher %d event %d: %s %s, want RV %d", n, i, ev.Type, describeEvent(ev), rv)
			}
		}
	}
}

func testListExactFuture(t *testing.T, e *Env) {
	e.mustCreate(t, "ns", "a", nil)
	err := e.Store.GetList(ctx(t), e.ResourcePrefix, exactOpts(e.etcdRev(t)+1000), e.emptyList())
	expectCode(t, "Exact list at a future RV", err, storage.ErrTooLargeResourceVersion)
}

// testWatchBookmarkPromise checks that a BOOKMARK at RV r comes after every
// event at or below r, and that bookmark RVs never go back.
func testWatchBookmarkPromise(t *testing.T, e *Env) {
	opts := allOpts(rvAt(e.etcdRev(t)))
	opts.ProgressNotify = true
	opts.Predicate.AllowWatchBookmarks = true
	w := e.mustWatch(t, e.ResourcePrefix, opts)
	var rvs []int64
	for i := range 5 {
		rvs = append(rvs, rvOf(t, e.mustCreate(t, "ns", fmt.Sprintf("o%d", i), nil)))
	}
	last := rvs[len(rvs)-1]
	seen := map[int64]bool{}
	var lastBookmark int64
	deadline := time.Now().Add(waitTimeout)
	for time.Now().Before(deadline) {
		if err := e.Store.RequestWatchProgress(ctx(t)); err != nil {
			t.Fatalf("RequestWatchProgress: %v", err)
		}
		select {
		case ev, ok := <-w.w.ResultChan():
			if !ok {
				t.Fatal("watch closed")
			}
			rv := rvOf(t, ev.Object)
			switch ev.Type {
			case watch.Bookmark:
				if rv < lastBookmark {
					t.Fatalf("BOOKMARK at %d after one at %d", rv, lastBookmark)
				}
				lastBookmark = rv
				for _, w := range rvs {
					if w <= rv && !seen[w] {
						t.Fatalf("BOOKMARK at %d before the event at %d", rv, w)
					}
				}
				if rv >= last {
					return
				}
			case watch.Added:
				if rv <= lastBookmark {
					t.Fatalf("ADDED %s after a BOOKMARK at %d", describe(ev.Object), lastBookmark)
				}
				seen[rv] = true
			default:
				t.Fatalf("unexpected %s %s", ev.Type, describeEvent(ev))
			}
		case <-time.After(200 * time.Millisecond):
		}
	}
	t.Fatalf("no BOOKMARK at or after RV %d within %v (saw %d of %d events)", last, waitTimeout, len(seen), len(rvs))
}

func testListNamespacePaging(t *testing.T, e *Env) {
	createN(t, e, "ns1", 3, nil)
	createN(t, e, "ns2", 2, nil)
	createN(t, e, "ns10", 2, nil)
	first := e.page(t, e.nsKey("ns1"), everything, 2, "")
	checkNames(t, first, "ns1/o00", "ns1/o01")
	token, remaining := listMeta(t, first)
	if remaining == nil || *remaining != 1 {
		t.Fatalf("remainingItemCount %v in namespace ns1, want 1", remaining)
	}
	second := e.page(t, e.nsKey("ns1"), everything, 2, token)
	checkNames(t, second, "ns1/o02")
	if tok, _ := listMeta(t, second); tok != "" {
		t.Fatalf("continue token %q after the last item of ns1", tok)
	}
}

// testWatchDeadlineBookmark: a watch that allows bookmarks and has a
// context deadline gets a BOOKMARK before the deadline ends it, not older
// than the events it delivered; without AllowWatchBookmarks it gets none.
func testWatchDeadlineBookmark(t *testing.T, e *Env) {
	for _, allow := range []bool{true, false} {
		opts := allOpts(rvAt(e.etcdRev(t)))
		opts.Predicate.AllowWatchBookmarks = allow
		wctx, cancel := context.WithTimeout(ctx(t), 1500*time.Millisecond)
		w, err := e.Store.Watch(wctx, e.ResourcePrefix, opts)
		if err != nil {
			cancel()
			t.Fatal(err)
		}
		created := rvOf(t, e.mustCreate(t, "ns", fmt.Sprintf("deadline-%v", allow), nil))
		events := drainUntilClosed(t, w)
		cancel()
		w.Stop()
		var bookmarks []int64
		for _, ev := range events {
			if ev.Type == watch.Bookmark {
				bookmarks = append(bookmarks, rvOf(t, ev.Object))
			}
		}
		switch {
		case allow && len(bookmarks) == 0:
			t.Fatalf("no BOOKMARK before the deadline ended the watch (events %d)", len(events))
		case allow && bookmarks[len(bookmarks)-1] < created:
			t.Fatalf("deadline BOOKMARK at %d, older than the ADDED at %d it follows", bookmarks[len(bookmarks)-1], created)
		case !allow && len(bookmarks) > 0:
			t.Fatalf("BOOKMARK %v sent to a watch that does not allow bookmarks", bookmarks)
		}
	}
}
