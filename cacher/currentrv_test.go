package cacher_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/internal/testapi"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/storage/counting"
)

// gateKey marks the contexts whose current-revision reads gatedRevisions
// counts and whose first one it holds.
type gateKey struct{}

// gatedRevisions holds the first current-revision read made for a marked
// context until release, and counts the marked reads.
type gatedRevisions struct {
	*counting.Storage
	gated   atomic.Int64
	held    chan struct{} // closed once the first marked read is held
	release chan struct{}
}

func (s *gatedRevisions) GetCurrentResourceVersion(ctx context.Context) (uint64, error) {
	if ctx.Value(gateKey{}) != nil && s.gated.Add(1) == 1 {
		close(s.held)
		select {
		case <-s.release:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	return s.Storage.GetCurrentResourceVersion(ctx)
}

// Consistent lists that arrive while another one's read of the storage's
// current revision is under way share one read started after them, and
// each still sees a write finished before it was asked for.
func TestConsistentListsShareTheCurrentRevisionRead(t *testing.T) {
	store := &gatedRevisions{Storage: counting.New(newStore(t, embedtest.Prefix(t), false)),
		held: make(chan struct{}), release: make(chan struct{})}
	c := startCacher(t, store)
	ctx := context.WithValue(testCtx(t), gateKey{}, true)
	list := func(out chan<- []string) {
		l := &testapi.WidgetList{}
		if err := c.GetList(ctx, "/widgets", storage.ListOptions{Recursive: true, Predicate: storage.Everything}, l); err != nil {
			t.Errorf("GetList: %v", err)
		}
		var names []string
		for _, it := range l.Items {
			names = append(names, it.Namespace+"/"+it.Name)
		}
		out <- names
	}

	first := make(chan []string, 1)
	go list(first)
	select {
	case <-store.held:
	case <-ctx.Done():
		t.Fatal("the first consistent list never read the current revision")
	}
	create(t, c, "ns", "written-before", nil)
	const later = 5
	results := make(chan []string, later)
	for range later {
		go list(results)
	}
	deadline := time.Now().Add(10 * time.Second)
	for cacher.RevisionWaitersForTest(c) < later && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := cacher.RevisionWaitersForTest(c); n < later {
		t.Errorf("%d of %d later lists wait for the read under way", n, later)
	}
	close(store.release)

	for range later + 1 {
		var names []string
		select {
		case names = <-first:
		case names = <-results:
		}
		if !slices.Contains(names, "ns/written-before") {
			t.Errorf("a consistent list misses a write finished before it: %v", names)
		}
	}
	if n := store.gated.Load(); n != 2 {
		t.Errorf("current-revision reads: %d for %d consistent lists, want 2", n, later+1)
	}
}
