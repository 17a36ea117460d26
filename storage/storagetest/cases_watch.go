package storagetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/storage"
)

var watchCases = []Case{
	{"WatchFromZeroSendsInitialState", testWatchFromZero},
	{"WatchFromZeroThenDelete", testWatchFromZeroDelete},
	{"WatchFromResourceVersionIsExclusive", testWatchFromRV},
	{"WatchFromResourceVersionReplaysDelete", testWatchFromRVDelete},
	{"WatchFromUnsetSendsInitialState", testWatchFromUnset},
	{"WatchFromNowWithoutInitialEvents", testWatchFromUnsetWithoutInitialEvents},
	{"WatchFromCurrentResourceVersion", testWatchFromCurrent},
	{"WatchDeleteEventCarriesDeletionRevision", testWatchDeleteRV},
	{"WatchLabelSelectorTransitions", testWatchLabelTransitions},
	{"WatchFieldSelectorTransitions", testWatchFieldTransitions},
	{"WatchProgressNotifyBookmark", testWatchProgressNotify},
	{"WatchContextCancelClosesChannel", testWatchContextCancel},
	{"WatchStopClosesChannel", testWatchStop},
	{"WatchTooOldResourceVersion", testWatchTooOld},
	{"WatchNonRecursiveSingleKey", testWatchNonRecursive},
	{"WatchRecursiveSiblingPrefix", testWatchSiblingPrefix},
	{"WatchNamespaceScoped", testWatchNamespaceScoped},
	{"WatchOrderedUnderConcurrentWriters", testWatchOrdering},
	{"WatchDelayedDelivery", testWatchDelayed},
}

func allOpts(rv storage.RV) storage.ListOptions {
	return storage.ListOptions{ResourceVersion: rv, Recursive: true, Predicate: storage.Everything}
}

// expectAt reads the next non-bookmark event and checks type, name and RV.
func (w *watcher) expectAt(typ watch.EventType, ns, name string, rv int64) watch.Event {
	w.t.Helper()
	ev := w.expect(typ, ns, name)
	if got := rvOf(w.t, ev.Object); got != rv {
		w.t.Fatalf("%s %s/%s at RV %d, want %d", typ, ns, name, got, rv)
	}
	return ev
}

// converge reads events until every name in want has been seen at its RV,
// checking that each name's first event is ADDED, that no name's RV goes
// back, and that no other name appears. (Initial events carry each object's
// own RV, so RVs across names need not increase.)
func (w *watcher) converge(want map[string]int64) {
	w.t.Helper()
	seen := map[string]int64{}
	for done := 0; done < len(want); {
		ev := w.nextObject()
		if ev.Type == watch.Error {
			w.t.Fatalf("ERROR event %s", statusOf(ev))
		}
		acc := accessor(w.t, ev.Object)
		n := acc.GetNamespace() + "/" + acc.GetName()
		rv := rvOf(w.t, ev.Object)
		target, ok := want[n]
		switch {
		case !ok:
			w.t.Fatalf("unexpected %s %s", ev.Type, describe(ev.Object))
		case rv == seen[n]:
			w.t.Fatalf("%s %s delivered twice (already seen at RV %d)", ev.Type, describe(ev.Object), seen[n])
		case rv < seen[n]:
			w.t.Fatalf("%s %s after an event for it at RV %d: RVs went back", ev.Type, describe(ev.Object), seen[n])
		case seen[n] == 0 && ev.Type != watch.Added:
			w.t.Fatalf("first event of %s is %s, want ADDED", n, ev.Type)
		case seen[n] != 0 && ev.Type == watch.Added:
			w.t.Fatalf("second ADDED for %s", n)
		case rv > target:
			w.t.Fatalf("%s %s is newer than the last write %d", ev.Type, describe(ev.Object), target)
		}
		seen[n] = rv
		if rv == target {
			done++
		}
	}
}

func testWatchFromZero(t *testing.T, e *Env) {
	e.mustCreate(t, "ns", "a", nil)
	b := e.mustCreate(t, "ns", "b", nil)
	a2 := e.mustBump(t, e.key("ns", "a"))
	w := e.mustWatch(t, e.ResourcePrefix, allOpts(storage.RVAny))
	w.converge(map[string]int64{"ns/a": rvOf(t, a2), "ns/b": rvOf(t, b)})
	c := e.mustCreate(t, "ns", "c", nil)
	w.expectAt(watch.Added, "ns", "c", rvOf(t, c))
	b2 := e.mustBump(t, e.key("ns", "b"))
	w.expectAt(watch.Modified, "ns", "b", rvOf(t, b2))
}

func testWatchFromZeroDelete(t *testing.T, e *Env) {
	a := e.mustCreate(t, "ns", "a", nil)
	w := e.mustWatch(t, e.ResourcePrefix, allOpts(storage.RVAny))
	w.converge(map[string]int64{"ns/a": rvOf(t, a)})
	e.mustDelete(t, e.key("ns", "a"))
	w.expect(watch.Deleted, "ns", "a")
}

func testWatchFromRV(t *testing.T, e *Env) {
	e.mustCreate(t, "ns", "a", nil)
	from := e.mustBump(t, e.key("ns", "a"))
	a3 := e.mustBump(t, e.key("ns", "a"))
	b := e.mustCreate(t, "ns", "b", nil)
	w := e.mustWatch(t, e.ResourcePrefix, allOpts(rvAt(rvOf(t, from))))
	ev := w.expectAt(watch.Modified, "ns", "a", rvOf(t, a3))
	if replicas(t, ev.Object) != 2 {
		t.Fatalf("MODIFIED a carries replicas %d, want 2", replicas(t, ev.Object))
	}
	w.expectAt(watch.Added, "ns", "b", rvOf(t, b))
	b2 := e.mustBump(t, e.key("ns", "b"))
	w.expectAt(watch.Modified, "ns", "b", rvOf(t, b2))
}

func testWatchFromRVDelete(t *testing.T, e *Env) {
	a := e.mustCreate(t, "ns", "a", nil)
	a2 := e.mustBump(t, e.key("ns", "a"))
	e.mustDelete(t, e.key("ns", "a"))
	delRV := e.etcdRev(t)
	w := e.mustWatch(t, e.ResourcePrefix, allOpts(rvAt(rvOf(t, a))))
	w.expectAt(watch.Modified, "ns", "a", rvOf(t, a2))
	ev := w.expectAt(watch.Deleted, "ns", "a", delRV)
	if replicas(t, ev.Object) != 1 {
		t.Fatalf("DELETED carries replicas %d, want the last state (1)", replicas(t, ev.Object))
	}
}

// testWatchFromUnset: RV "" without SendInitialEvents is Kubernetes' "get
// state and start at most recent": the current state as ADDED, then changes.
func testWatchFromUnset(t *testing.T, e *Env) {
	old := e.mustCreate(t, "ns", "old", nil)
	w := e.mustWatch(t, e.nsKey("ns"), allOpts(storage.RV{}))
	w.expectAt(watch.Added, "ns", "old", rvOf(t, old))
	n := e.mustCreate(t, "ns", "new", nil)
	w.expectAt(watch.Added, "ns", "new", rvOf(t, n))
	o := e.mustBump(t, e.key("ns", "old"))
	w.expectAt(watch.Modified, "ns", "old", rvOf(t, o))
}

// testWatchFromUnsetWithoutInitialEvents: SendInitialEvents=false with RV
// "" (or "0") starts from now: no initial state, every later change.
func testWatchFromUnsetWithoutInitialEvents(t *testing.T, e *Env) {
	for i, rv := range []storage.RV{{}, storage.RVAny} {
		ns := fmt.Sprintf("ns%d", i)
		e.mustCreate(t, ns, "old", nil)
		opts := allOpts(rv)
		opts.SendInitialEvents = ptr(false)
		w := e.mustWatch(t, e.nsKey(ns), opts)
		n := e.mustCreate(t, ns, "new", nil)
		w.expectAt(watch.Added, ns, "new", rvOf(t, n))
		o := e.mustBump(t, e.key(ns, "old"))
		w.expectAt(watch.Modified, ns, "old", rvOf(t, o))
	}
}

func testWatchFromCurrent(t *testing.T, e *Env) {
	e.mustCreate(t, "ns", "a", nil)
	cur, err := e.Store.GetCurrentResourceVersion(ctx(t))
	if err != nil {
		t.Fatalf("GetCurrentResourceVersion: %v", err)
	}
	w := e.mustWatch(t, e.ResourcePrefix, allOpts(rvAt(int64(cur))))
	b := e.mustCreate(t, "ns", "b", nil)
	w.expectAt(watch.Added, "ns", "b", rvOf(t, b))
}

func testWatchDeleteRV(t *testing.T, e *Env) {
	e.mustCreate(t, "ns", "a", nil)
	last := e.mustBump(t, e.key("ns", "a"))
	w := e.mustWatch(t, e.ResourcePrefix, allOpts(rvAt(rvOf(t, last))))
	e.mustDelete(t, e.key("ns", "a"))
	delRV := e.etcdRev(t)
	ev := w.expect(watch.Deleted, "ns", "a")
	if got := rvOf(t, ev.Object); got != delRV || got <= rvOf(t, last) {
		t.Fatalf("DELETED at RV %d, want the deletion revision %d", got, delRV)
	}
	if replicas(t, ev.Object) != 1 {
		t.Fatalf("DELETED carries replicas %d, want the last state", replicas(t, ev.Object))
	}
}

// relabel sets key's labels and returns the write's RV.
func (e *Env) relabel(t *testing.T, key string, lbls map[string]string) int64 {
	t.Helper()
	return rvOf(t, e.mustUpdate(t, key, func(o runtime.Object) { setLabels(t, o, lbls) }))
}

func testWatchLabelTransitions(t *testing.T, e *Env) {
	e.mustCreate(t, "ns", "a", map[string]string{"pick": "no"})
	opts := selectorOpts(t, "pick=yes", "")
	opts.ResourceVersion = rvAt(e.etcdRev(t))
	w := e.mustWatch(t, e.ResourcePrefix, opts)
	key := e.key("ns", "a")
	e.relabel(t, key, map[string]string{"pick": "no", "x": "1"}) // unmatched -> unmatched: nothing
	rv := e.relabel(t, key, map[string]string{"pick": "yes"})
	w.expectAt(watch.Added, "ns", "a", rv)
	rv = e.relabel(t, key, map[string]string{"pick": "yes", "x": "2"})
	w.expectAt(watch.Modified, "ns", "a", rv)
	rv = e.relabel(t, key, map[string]string{"pick": "no"})
	ev := w.expectAt(watch.Deleted, "ns", "a", rv)
	if accessor(t, ev.Object).GetLabels()["pick"] != "yes" {
		t.Fatalf("DELETED for leaving the selector carries labels %v, want the last matching state", accessor(t, ev.Object).GetLabels())
	}
	e.mustDelete(t, key) // not matching: nothing
	s := e.mustCreate(t, "ns", "sentinel", map[string]string{"pick": "yes"})
	w.expectAt(watch.Added, "ns", "sentinel", rvOf(t, s))
}

func testWatchFieldTransitions(t *testing.T, e *Env) {
	e.mustCreate(t, "ns", "a", nil)
	opts := selectorOpts(t, "", "spec.nodeName=n1")
	opts.ResourceVersion = rvAt(e.etcdRev(t))
	w := e.mustWatch(t, e.ResourcePrefix, opts)
	key := e.key("ns", "a")
	node := func(n string) int64 {
		return rvOf(t, e.mustUpdate(t, key, func(o runtime.Object) { setNodeName(t, o, n) }))
	}
	node("n2")
	w.expectAt(watch.Added, "ns", "a", node("n1"))
	w.expectAt(watch.Modified, "ns", "a", rvOf(t, e.mustBump(t, key)))
	w.expectAt(watch.Deleted, "ns", "a", node("n3"))
	node("n4")
	obj := e.newObj("ns", "sentinel", nil)
	setNodeName(t, obj, "n1")
	s := e.mustCreateObj(t, obj)
	w.expectAt(watch.Added, "ns", "sentinel", rvOf(t, s))
	e.mustDelete(t, e.key("ns", "sentinel")) // matching object deleted
	ev := w.expect(watch.Deleted, "ns", "sentinel")
	if rvOf(t, ev.Object) <= rvOf(t, s) {
		t.Fatalf("DELETED at RV %d, not after the create at %d", rvOf(t, ev.Object), rvOf(t, s))
	}
}

// testWatchProgressNotify checks that RequestWatchProgress advances a
// ProgressNotify watch past writes made only outside its prefix. Each round
// writes one more such key: a store may hold back a notification it cannot
// yet prove covers the history its watch is still reading, but it must not
// withhold them all.
func testWatchProgressNotify(t *testing.T, e *Env) {
	e.mustCreate(t, "ns", "a", nil)
	opts := allOpts(rvAt(e.etcdRev(t)))
	opts.ProgressNotify = true
	opts.Predicate.AllowWatchBookmarks = true
	w := e.mustWatch(t, e.ResourcePrefix, opts)
	deadline := time.Now().Add(waitTimeout)
	var target int64
	for time.Now().Before(deadline) {
		target = e.bumpUnrelated(t)
		if err := e.Store.RequestWatchProgress(ctx(t)); err != nil {
			t.Fatalf("RequestWatchProgress: %v", err)
		}
		if waitBookmark(t, w, target, 300*time.Millisecond) {
			return
		}
	}
	t.Fatalf("no BOOKMARK at RV >= %d (writes outside the prefix only) within %v", target, waitTimeout)
}

// waitBookmark reads events for up to d and reports whether a BOOKMARK at
// RV >= min arrived; any other event fails t.
func waitBookmark(t *testing.T, w *watcher, min int64, d time.Duration) bool {
	t.Helper()
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case ev, ok := <-w.w.ResultChan():
			if !ok {
				t.Fatal("watch closed")
			}
			if ev.Type != watch.Bookmark {
				t.Fatalf("got %s %s, want only BOOKMARKs (no write under the prefix)", ev.Type, describeEvent(ev))
			}
			if accessor(t, ev.Object).GetName() != "" {
				t.Fatalf("BOOKMARK carries an object %s", describe(ev.Object))
			}
			if rvOf(t, ev.Object) >= min {
				return true
			}
		case <-timer.C:
			return false
		}
	}
}

func testWatchContextCancel(t *testing.T, e *Env) {
	c, cancel := contextWithCancel(t)
	w, err := e.Store.Watch(c, e.ResourcePrefix, allOpts(storage.RV{}))
	if err != nil {
		t.Fatalf("Watch: %v", err)
	}
	defer w.Stop()
	cancel()
	evs := drainUntilClosed(t, w)
	for _, ev := range evs {
		if ev.Type != watch.Error && ev.Type != watch.Bookmark {
			t.Fatalf("event %s after cancel with no writes", ev.Type)
		}
	}
}

func testWatchStop(t *testing.T, e *Env) {
	w, err := e.Store.Watch(ctx(t), e.ResourcePrefix, allOpts(storage.RV{}))
	if err != nil {
		t.Fatalf("Watch: %v", err)
	}
	e.mustCreate(t, "ns", "a", nil)
	w.Stop()
	w.Stop() // a second Stop must be harmless
	drainUntilClosed(t, w)
}

func testWatchTooOld(t *testing.T, e *Env) {
	a := e.mustCreate(t, "ns", "a", nil)
	e.mustBump(t, e.key("ns", "a"))
	e.mustBump(t, e.key("ns", "a"))
	e.compact(t)
	w, err := e.Store.Watch(ctx(t), e.ResourcePrefix, allOpts(rvAt(rvOf(t, a))))
	if err != nil {
		if !apierrors.IsResourceExpired(err) || !storage.IsCode(err, storage.CodeGone) {
			t.Fatalf("Watch from a compacted RV returned %v, want 410 Gone", err)
		}
		return
	}
	defer w.Stop()
	evs := drainUntilClosed(t, w)
	if len(evs) != 1 || evs[0].Type != watch.Error {
		t.Fatalf("watch from a compacted RV delivered %v, want exactly one ERROR then close", eventTypes(evs))
	}
	st, ok := evs[0].Object.(*metav1.Status)
	if !ok || st.Code != 410 || !apierrors.IsResourceExpired(&apierrors.StatusError{ErrStatus: *st}) {
		t.Fatalf("ERROR event %s, want a *metav1.Status 410 Expired", statusOf(evs[0]))
	}
}

func testWatchNonRecursive(t *testing.T, e *Env) {
	e.mustCreate(t, "ns", "a", nil)
	opts := storage.ListOptions{ResourceVersion: rvAt(e.etcdRev(t)), Predicate: storage.Everything}
	w := e.mustWatch(t, e.key("ns", "a"), opts)
	e.mustCreate(t, "ns", "ab", nil)
	e.mustBump(t, e.key("ns", "ab"))
	a := e.mustBump(t, e.key("ns", "a"))
	w.expectAt(watch.Modified, "ns", "a", rvOf(t, a))
	e.mustDelete(t, e.key("ns", "ab"))
	e.mustDelete(t, e.key("ns", "a"))
	w.expect(watch.Deleted, "ns", "a")
}

func testWatchSiblingPrefix(t *testing.T, e *Env) {
	w := e.mustWatch(t, e.nsKey("a"), allOpts(rvAt(e.etcdRev(t))))
	e.mustCreate(t, "ab", "x", nil)
	e.mustBump(t, e.key("ab", "x"))
	s := e.mustCreate(t, "a", "x", nil)
	w.expectAt(watch.Added, "a", "x", rvOf(t, s))
	e.mustDelete(t, e.key("ab", "x"))
	s2 := e.mustCreate(t, "a", "y", nil)
	w.expectAt(watch.Added, "a", "y", rvOf(t, s2))
}

func testWatchNamespaceScoped(t *testing.T, e *Env) {
	e.mustCreate(t, "ns1", "a", nil)
	e.mustCreate(t, "ns2", "a", nil)
	w := e.mustWatch(t, e.nsKey("ns2"), allOpts(storage.RVAny))
	w.converge(map[string]int64{"ns2/a": rvOf(t, e.mustGet(t, e.key("ns2", "a")))})
	e.mustBump(t, e.key("ns1", "a"))
	e.mustCreate(t, "ns1", "b", nil)
	b := e.mustCreate(t, "ns2", "b", nil)
	w.expectAt(watch.Added, "ns2", "b", rvOf(t, b))
}

func testWatchOrdering(t *testing.T, e *Env) {
	const writers, each = 4, 8
	w := e.mustWatch(t, e.ResourcePrefix, allOpts(rvAt(e.etcdRev(t))))
	var wg sync.WaitGroup
	errs := make(chan error, writers*each)
	for i := range writers {
		wg.Go(func() {
			key := e.key("ns", fmt.Sprintf("w%d", i))
			if err := e.Store.Create(ctx(t), key, e.newObj("ns", fmt.Sprintf("w%d", i), nil), nil, 0); err != nil {
				errs <- err
				return
			}
			for range each - 1 {
				if err := e.Store.GuaranteedUpdate(ctx(t), key, e.empty(), false, nil, increment(t), nil, storage.UpdateOptions{}); err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("writer: %v", err)
	}
	var last int64
	next := map[string]int64{}
	for range writers * each {
		ev := w.nextObject()
		if ev.Type == watch.Error {
			t.Fatalf("ERROR event %s", statusOf(ev))
		}
		rv := rvOf(t, ev.Object)
		if rv <= last {
			t.Fatalf("event %s %s after RV %d: not strictly increasing", ev.Type, describe(ev.Object), last)
		}
		last = rv
		name := accessor(t, ev.Object).GetName()
		if got := replicas(t, ev.Object); got != next[name] {
			t.Fatalf("%s replicas %d, want %d: an event was lost, repeated or reordered", name, got, next[name])
		}
		if want := map[bool]watch.EventType{true: watch.Added, false: watch.Modified}[next[name] == 0]; ev.Type != want {
			t.Fatalf("%s event for %s replicas %d, want %s", ev.Type, name, next[name], want)
		}
		next[name]++
	}
	w.expectNone()
}

func testWatchDelayed(t *testing.T, e *Env) {
	w := e.mustWatch(t, e.ResourcePrefix, allOpts(rvAt(e.etcdRev(t))))
	const n = 60
	var rvs []int64
	for i := range n {
		rvs = append(rvs, rvOf(t, e.mustCreate(t, "ns", fmt.Sprintf("o%02d", i), nil)))
	}
	// Only now start reading: the watch must have kept every event.
	for i := range n {
		w.expectAt(watch.Added, "ns", fmt.Sprintf("o%02d", i), rvs[i])
	}
}
