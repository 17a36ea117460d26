package storagetest

import (
	"testing"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/storage"
)

var watchInitialCases = []Case{
	{"WatchSendInitialEventsConsistent", testSIEConsistent},
	{"WatchSendInitialEventsFromZero", testSIEFromZero},
	{"WatchSendInitialEventsFromResourceVersion", testSIEFromRV},
	{"WatchSendInitialEventsFromCompactedResourceVersion", testSIEFromCompactedRV},
	{"WatchSendInitialEventsEmpty", testSIEEmpty},
	{"WatchSendInitialEventsWithSelector", testSIESelector},
	{"WatchSendInitialEventsWithoutBookmarks", testSIEWithoutBookmarks},
}

func sieOpts(rv storage.RV) storage.ListOptions {
	opts := allOpts(rv)
	opts.SendInitialEvents = ptr(true)
	opts.Predicate.AllowWatchBookmarks = true
	return opts
}

// initialEvents reads ADDED events up to the initial-events-end bookmark and
// returns them with the bookmark's RV. Other bookmarks are skipped; any
// other event fails the case.
func (w *watcher) initialEvents() (added map[string]int64, bookmarkRV int64) {
	w.t.Helper()
	added = map[string]int64{}
	for {
		ev := w.next()
		switch {
		case isInitialEventsEnd(w.t, ev):
			rv := rvOf(w.t, ev.Object)
			for n, arv := range added {
				if arv > rv {
					w.t.Fatalf("initial event %s at RV %d is newer than the initial-events-end bookmark %d", n, arv, rv)
				}
			}
			return added, rv
		case isBookmark(ev):
		case ev.Type == watch.Added:
			acc := accessor(w.t, ev.Object)
			n := acc.GetNamespace() + "/" + acc.GetName()
			if _, dup := added[n]; dup {
				w.t.Fatalf("two initial ADDED events for %s", n)
			}
			added[n] = rvOf(w.t, ev.Object)
		default:
			w.t.Fatalf("got %s (%s) before the initial-events-end bookmark, want only ADDED", ev.Type, describeEvent(ev))
		}
	}
}

func describeEvent(ev watch.Event) string {
	if ev.Type == watch.Error {
		return statusOf(ev)
	}
	return describe(ev.Object)
}

func testSIEConsistent(t *testing.T, e *Env) {
	e.mustCreate(t, "ns", "a", nil)
	b := e.mustCreate(t, "ns", "b", nil)
	a2 := e.mustBump(t, e.key("ns", "a"))
	e.mustCreate(t, "ns", "gone", nil)
	e.mustDelete(t, e.key("ns", "gone"))
	floor := e.bumpUnrelated(t)
	w := e.mustWatch(t, e.ResourcePrefix, sieOpts(storage.RV{}))
	added, bm := w.initialEvents()
	if len(added) != 2 || added["ns/a"] != rvOf(t, a2) || added["ns/b"] != rvOf(t, b) {
		t.Fatalf("initial events %v, want ns/a@%d ns/b@%d", added, rvOf(t, a2), rvOf(t, b))
	}
	if bm < floor {
		t.Fatalf("initial-events-end bookmark at RV %d, older than revision %d written before the watch", bm, floor)
	}
	c := e.mustCreate(t, "ns", "c", nil)
	w.expectAt(watch.Added, "ns", "c", rvOf(t, c))
	a3 := e.mustBump(t, e.key("ns", "a"))
	w.expectAt(watch.Modified, "ns", "a", rvOf(t, a3))
}

func testSIEFromZero(t *testing.T, e *Env) {
	e.mustCreate(t, "ns", "a", nil)
	b := e.mustCreate(t, "ns", "b", nil)
	a2 := e.mustBump(t, e.key("ns", "a"))
	w := e.mustWatch(t, e.ResourcePrefix, sieOpts(storage.RVAny))
	added, _ := w.initialEvents()
	// RV 0 may start from an older state; events after the bookmark must
	// then bring the watcher to the current one.
	want := map[string]int64{"ns/a": rvOf(t, a2), "ns/b": rvOf(t, b)}
	rest := map[string]int64{}
	for n, rv := range added {
		if rv > want[n] || want[n] == 0 {
			t.Fatalf("initial event %s@%d is not a state of the store", n, rv)
		}
		if rv < want[n] {
			rest[n] = want[n]
		}
	}
	for n, rv := range want {
		if _, ok := added[n]; !ok {
			rest[n] = rv
		}
	}
	w.convergeAfter(added, rest)
	c := e.mustCreate(t, "ns", "c", nil)
	w.expectAt(watch.Added, "ns", "c", rvOf(t, c))
}

// convergeAfter is converge for a watch whose initial events already
// reported the names in known.
func (w *watcher) convergeAfter(known, want map[string]int64) {
	w.t.Helper()
	for done := 0; done < len(want); {
		ev := w.nextObject()
		acc := accessor(w.t, ev.Object)
		n := acc.GetNamespace() + "/" + acc.GetName()
		target, ok := want[n]
		if !ok || ev.Type == watch.Error {
			w.t.Fatalf("unexpected %s %s", ev.Type, describeEvent(ev))
		}
		_, had := known[n]
		if (ev.Type == watch.Added) == had {
			w.t.Fatalf("%s for %s, which the watcher had %v", ev.Type, n, map[bool]string{true: "seen", false: "not seen"}[had])
		}
		known[n] = rvOf(w.t, ev.Object)
		if known[n] == target {
			done++
		}
	}
}

func testSIEFromRV(t *testing.T, e *Env) {
	first := e.mustCreate(t, "ns", "a", nil)
	b := e.mustCreate(t, "ns", "b", nil)
	w := e.mustWatch(t, e.ResourcePrefix, sieOpts(rvAt(rvOf(t, first))))
	added, bm := w.initialEvents()
	if added["ns/a"] != rvOf(t, first) {
		t.Fatalf("initial events %v lack ns/a@%d, which existed at the requested RV", added, rvOf(t, first))
	}
	if bm < rvOf(t, first) {
		t.Fatalf("initial-events-end bookmark at %d, older than the requested RV %d", bm, rvOf(t, first))
	}
	rest := map[string]int64{}
	if added["ns/b"] != rvOf(t, b) {
		rest["ns/b"] = rvOf(t, b)
	}
	w.convergeAfter(added, rest)
	a2 := e.mustBump(t, e.key("ns", "a"))
	w.expectAt(watch.Modified, "ns", "a", rvOf(t, a2))
}

// testSIEFromCompactedRV: SendInitialEvents with RV N is not-older-than N,
// so a compacted N does not matter: the current state, no 410.
func testSIEFromCompactedRV(t *testing.T, e *Env) {
	first := e.mustCreate(t, "ns", "a", nil)
	a2 := e.mustBump(t, e.key("ns", "a"))
	b := e.mustCreate(t, "ns", "b", nil)
	e.bumpUnrelated(t)
	compacted := e.compact(t)
	if compacted <= rvOf(t, first) {
		t.Fatalf("compaction at %d does not cover the requested RV %d", compacted, rvOf(t, first))
	}
	w := e.mustWatch(t, e.ResourcePrefix, sieOpts(rvAt(rvOf(t, first))))
	added, bm := w.initialEvents()
	if added["ns/a"] != rvOf(t, a2) || added["ns/b"] != rvOf(t, b) || len(added) != 2 {
		t.Fatalf("initial events %v, want the current state ns/a@%d ns/b@%d", added, rvOf(t, a2), rvOf(t, b))
	}
	if bm < compacted {
		t.Fatalf("initial-events-end bookmark at %d, older than the state read after compaction at %d", bm, compacted)
	}
	a3 := e.mustBump(t, e.key("ns", "a"))
	w.expectAt(watch.Modified, "ns", "a", rvOf(t, a3))
}

func testSIEEmpty(t *testing.T, e *Env) {
	floor := e.bumpUnrelated(t)
	w := e.mustWatch(t, e.ResourcePrefix, sieOpts(storage.RV{}))
	added, bm := w.initialEvents()
	if len(added) != 0 {
		t.Fatalf("initial events %v for an empty prefix", added)
	}
	if bm < floor {
		t.Fatalf("initial-events-end bookmark at %d, older than revision %d written before the watch", bm, floor)
	}
	a := e.mustCreate(t, "ns", "a", nil)
	if rvOf(t, a) <= bm {
		t.Fatalf("write after the watch started at %d, not after the bookmark %d", rvOf(t, a), bm)
	}
	w.expectAt(watch.Added, "ns", "a", rvOf(t, a))
}

func testSIESelector(t *testing.T, e *Env) {
	a := e.mustCreate(t, "ns", "a", map[string]string{"pick": "yes"})
	e.mustCreate(t, "ns", "b", map[string]string{"pick": "no"})
	c := e.mustCreate(t, "ns", "c", map[string]string{"pick": "yes"})
	opts := selectorOpts(t, "pick=yes", "")
	opts.SendInitialEvents = ptr(true)
	opts.Predicate.AllowWatchBookmarks = true
	w := e.mustWatch(t, e.ResourcePrefix, opts)
	added, _ := w.initialEvents()
	if len(added) != 2 || added["ns/a"] != rvOf(t, a) || added["ns/c"] != rvOf(t, c) {
		t.Fatalf("initial events %v, want only the matching ns/a and ns/c", added)
	}
	rv := e.relabel(t, e.key("ns", "b"), map[string]string{"pick": "yes"})
	w.expectAt(watch.Added, "ns", "b", rv)
}

func testSIEWithoutBookmarks(t *testing.T, e *Env) {
	a := e.mustCreate(t, "ns", "a", nil)
	opts := sieOpts(storage.RV{})
	opts.Predicate.AllowWatchBookmarks = false
	w := e.mustWatch(t, e.ResourcePrefix, opts)
	w.expectAt(watch.Added, "ns", "a", rvOf(t, a))
	b := e.mustCreate(t, "ns", "b", nil)
	ev := w.next()
	if ev.Type == watch.Bookmark {
		t.Fatal("BOOKMARK delivered to a watch that does not allow bookmarks")
	}
	checkEvent(t, ev, watch.Added, "ns", "b")
	if rvOf(t, ev.Object) != rvOf(t, b) {
		t.Fatalf("ADDED b at %d, want %d", rvOf(t, ev.Object), rvOf(t, b))
	}
}
