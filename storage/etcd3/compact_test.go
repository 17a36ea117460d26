package etcd3

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/listwatch/listwatch/storage"
)

// TestCompactorTwoInstances runs two compactors on one coordination key:
// each round exactly one of them compacts, to the revision recorded one
// round earlier, so the latest round's history survives.
func TestCompactorTwoInstances(t *testing.T) {
	ctx := testCtx(t)
	key := uniquePrefix(t) + "compact_rev_key"
	a, err := NewCompactor(CompactorConfig{Client: etcdServer.Client, Interval: time.Hour, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewCompactor(CompactorConfig{Client: etcdServer.Client, Interval: time.Hour, Key: key})
	if err != nil {
		t.Fatal(err)
	}
	s := newTestStore(t)
	write := func() int64 {
		c := mustCreate(t, s, "/widgets/ns/w"+strconv.FormatInt(currentRev(t), 10), testWidget("w", nil))
		return int64(rvOf(t, c))
	}
	// Round 1: whoever wins records a revision and compacts nothing.
	if rev, err := a.Compact(ctx); err != nil || rev != 0 {
		t.Fatalf("first round compacted %d (%v)", rev, err)
	}
	if rev, err := b.Compact(ctx); err != nil || rev != 0 {
		t.Fatalf("loser of round 1 compacted %d (%v)", rev, err)
	}
	kept := write()
	// Round 2: b lost round 1, so it holds no target and catches up; a wins
	// and compacts to the revision of its first round (< kept).
	revB, err := b.Compact(ctx)
	if err != nil {
		t.Fatal(err)
	}
	revA, err := a.Compact(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if (revA == 0) == (revB == 0) {
		t.Fatalf("round 2: a compacted %d, b compacted %d; want exactly one", revA, revB)
	}
	compacted := max(revA, revB)
	if compacted >= kept {
		t.Fatalf("compacted to %d, which removes the history at %d written after the previous round", compacted, kept)
	}
	// History at kept is still readable; below the compaction it is gone.
	if err := storageListAt(t, s, kept); err != nil {
		t.Fatalf("list at %d after compaction to %d: %v", kept, compacted, err)
	}
	if err := storageListAt(t, s, compacted-1); err == nil || !storage.IsCode(err, storage.CodeGone) {
		t.Fatalf("list below the compacted revision: %v", err)
	}
	if a.LastCompacted()+b.LastCompacted() != compacted {
		t.Fatal("LastCompacted does not report the compaction")
	}
}

func storageListAt(t *testing.T, s *Store, rev int64) error {
	return s.GetList(testCtx(t), "/widgets", storage.ListOptions{Recursive: true, ResourceVersion: rvAt(rev),
		ResourceVersionMatch: "Exact", Predicate: storage.Everything}, s.newListFunc())
}

func TestCompactorRunStopsWithContext(t *testing.T) {
	c, err := NewCompactor(CompactorConfig{Client: etcdServer.Client, Interval: 5 * time.Millisecond, Key: uniquePrefix(t) + "key"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(testCtx(t))
	done := make(chan error)
	go func() { done <- c.Run(ctx) }()
	s := newTestStore(t)
	// Rounds run: within a few intervals something gets compacted.
	waitFor(t, "a periodic compaction", func() bool {
		mustCreate(t, s, "/widgets/ns/w"+strconv.FormatInt(currentRev(t), 10), testWidget("w", nil))
		return c.LastCompacted() > 0
	})
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
}
