package cacher_test

import (
	"errors"
	"strconv"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/storage/etcd3"
)

// replica is one cacher process's worth of state: its own etcd client
// (connected to one member of the cluster), store and cacher.
type replica struct {
	store *etcd3.Store
	c     *cacher.Cacher
}

func startReplica(t *testing.T, cl *embedtest.Cluster, member int, prefix string) replica {
	t.Helper()
	s := memberStore(t, cl, member, prefix)
	return replica{store: s, c: startCacher(t, s)}
}

// memberStore is a Widget store on prefix with an etcd client of its own,
// connected to the cluster's member only.
func memberStore(t *testing.T, cl *embedtest.Cluster, member int, prefix string) *etcd3.Store {
	t.Helper()
	cli, err := embedtest.NewClient([]string{cl.Members[member].ClientURL.String()})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	s, err := etcd3.New(etcd3.Config{Client: cli, Codec: widget.Codec, NewFunc: widget.New,
		NewListFunc: widget.NewList, Prefix: prefix, ResourcePrefix: "/widgets"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

// collect reads the next n object events of w and returns their RVs.
func collect(t *testing.T, w watch.Interface, n int) []uint64 {
	t.Helper()
	var rvs []uint64
	for len(rvs) < n {
		ev := next(t, w, 20*time.Second)
		if ev.Type == watch.Error {
			t.Fatalf("error event after %d events: %v", len(rvs), ev.Object)
		}
		if ev.Type != watch.Bookmark {
			rvs = append(rvs, rvOf(t, ev.Object))
		}
	}
	return rvs
}

// TestReplicaResumeWithoutRelist: a client watching replica A reconnects to
// replica B, started after the client's RV (B's cache does not hold it),
// with the last RV it saw; B resumes from etcd's history with no gap, no
// duplicate and no error: the client does not relist.
func TestReplicaResumeWithoutRelist(t *testing.T) {
	cl := embedtest.StartCluster(t)
	prefix := embedtest.Prefix(t)
	a := startReplica(t, cl, 0, prefix)
	start := rvAt(create(t, a.store, "ns", "w0", nil))
	var writes []uint64
	for i := range 30 {
		writes = append(writes, bump(t, a.c, "ns", "w0"))
		if i%3 == 0 {
			writes = append(writes, create(t, a.c, "ns", "x"+strconv.Itoa(i), nil))
		}
	}
	onA := watchAll(t, a.c, start)
	seen := collect(t, onA, len(writes)/2)
	onA.Stop()
	for i := range 20 {
		writes = append(writes, bump(t, a.store, "ns", "x"+strconv.Itoa(i-i%3)))
	}
	b := startReplica(t, cl, 1, prefix) // its first list is newer than what the client saw
	onB := watchAll(t, b.c, rvAt(seen[len(seen)-1]))
	defer onB.Stop()
	seen = append(seen, collect(t, onB, len(writes)-len(seen))...)
	for i := range writes {
		if seen[i] != writes[i] {
			t.Fatalf("event %d at RV %d, want %d (A then B: %v; writes %v)", i, seen[i], writes[i], seen, writes)
		}
	}
}

// TestReplicaReadYourWrites: after a write acknowledged through replica A,
// replica B (another member, another cache) answers a consistent read and a
// read at the write's RV with it, waiting for its cache rather than
// failing; a compaction made through A's side is observed by B (410).
func TestReplicaReadYourWrites(t *testing.T) {
	cl := embedtest.StartCluster(t)
	prefix := embedtest.Prefix(t)
	a := startReplica(t, cl, 0, prefix)
	b := startReplica(t, cl, 2, prefix)
	old := create(t, a.c, "ns", "old", nil)
	for i := range 20 {
		rv := create(t, a.c, "ns", "w"+strconv.Itoa(i), nil)
		list := &widget.WidgetList{}
		if err := b.c.GetList(testCtx(t), "/widgets", storage.ListOptions{Recursive: true, Predicate: storage.Everything}, list); err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != i+2 {
			t.Fatalf("consistent list on B right after create %d on A: %d items, want %d", i, len(list.Items), i+2)
		}
		got := &widget.Widget{}
		if err := b.c.Get(testCtx(t), key("ns", "w"+strconv.Itoa(i)), storage.GetOptions{ResourceVersion: storage.RVAt(rv)}, got); err != nil {
			t.Fatalf("get on B at the RV of A's write: %v", err)
		}
	}
	cur := bump(t, a.c, "ns", "old")
	if _, err := cl.Client.Put(testCtx(t), "compact_rev_key", strconv.FormatUint(cur, 10)); err != nil {
		t.Fatal(err)
	}
	if err := cl.Compact(testCtx(t), int64(cur)); err != nil {
		t.Fatal(err)
	}
	w, err := b.c.Watch(testCtx(t), "/widgets", storage.ListOptions{Recursive: true, ResourceVersion: storage.RVAt(old), Predicate: storage.Everything})
	if err != nil && !errors.Is(err, storage.ErrGone) {
		t.Fatal(err)
	}
	if err == nil {
		defer w.Stop()
		ev := next(t, w, 20*time.Second)
		if st, ok := ev.Object.(*metav1.Status); ev.Type != watch.Error || !ok || st.Code != 410 {
			t.Fatalf("watch on B from an RV compacted through A's side: %s %v, want 410", ev.Type, ev.Object)
		}
	}
}
