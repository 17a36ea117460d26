package cacher_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/storage/counting"
	"github.com/listwatch/listwatch/storage/etcd3"
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
	checkSharedCurrentRevisionRead(t, "lists", func(ctx context.Context, c *cacher.Cacher) error {
		l := &widget.WidgetList{}
		if err := c.GetList(ctx, "/widgets", storage.ListOptions{Recursive: true, Predicate: storage.Everything}, l); err != nil {
			return fmt.Errorf("GetList: %w", err)
		}
		var names []string
		for _, it := range l.Items {
			names = append(names, it.Namespace+"/"+it.Name)
		}
		if !slices.Contains(names, "ns/written-before") {
			return fmt.Errorf("a consistent list misses a write finished before it: %v", names)
		}
		return nil
	})
}

// checkSharedCurrentRevisionRead starts one request (start) whose read of
// the storage's current revision is held, then writes ns/written-before,
// then starts five more, which must wait for the held read, and releases
// it: the six make two reads, and each start (which must see the write)
// returns nil.
func checkSharedCurrentRevisionRead(t *testing.T, what string, start func(ctx context.Context, c *cacher.Cacher) error) {
	t.Helper()
	store := &gatedRevisions{Storage: counting.New(newStore(t, embedtest.Prefix(t), false)),
		held: make(chan struct{}), release: make(chan struct{})}
	c := startCacher(t, store)
	ctx := context.WithValue(testCtx(t), gateKey{}, true)
	run := func(out chan<- error) { out <- start(ctx, c) }

	first := make(chan error, 1)
	go run(first)
	select {
	case <-store.held:
	case <-ctx.Done():
		t.Fatalf("the first of the %s never read the current revision", what)
	}
	create(t, c, "ns", "written-before", nil)
	const later = 5
	results := make(chan error, later)
	for range later {
		go run(results)
	}
	deadline := time.Now().Add(10 * time.Second)
	for cacher.RevisionWaitersForTest(c) < later && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := cacher.RevisionWaitersForTest(c); n < later {
		t.Errorf("%d of %d later %s wait for the read under way", n, later, what)
	}
	close(store.release)

	for range later + 1 {
		var err error
		select {
		case err = <-first:
		case err = <-results:
		}
		if err != nil {
			t.Error(err)
		}
	}
	if n := store.gated.Load(); n != 2 {
		t.Errorf("current-revision reads: %d for %d %s, want 2", n, later+1, what)
	}
}

// heldCompactions answers the first compacted-revision read made for a
// marked context (gateKey) from etcd at once but returns that answer only
// when released, and counts the marked reads.
type heldCompactions struct {
	*etcd3.Store
	marked  atomic.Int64
	held    chan struct{} // closed once the first marked answer is held
	release chan struct{}
}

func (s *heldCompactions) RefreshCompactRevision(ctx context.Context) (int64, error) {
	if ctx.Value(gateKey{}) == nil {
		return s.Store.RefreshCompactRevision(ctx)
	}
	rev, err := s.Store.RefreshCompactRevision(ctx)
	if s.marked.Add(1) == 1 {
		close(s.held)
		select {
		case <-s.release:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	return rev, err
}

// Exact lists that arrive while another one's compaction check is under
// way share one check started after them: a compaction that finished
// before they were asked for makes each of them 410, although the check
// under way (answered before it) did not see it.
func TestExactListsShareTheCompactionCheck(t *testing.T) {
	store := &heldCompactions{Store: newStore(t, embedtest.Prefix(t), false),
		held: make(chan struct{}), release: make(chan struct{})}
	c := startCacher(t, store)
	create(t, c, "ns", "a", nil)
	old := bump(t, c, "ns", "a")
	create(t, c, "ns", "b", nil)
	at := bump(t, c, "ns", "a")
	ctx := context.WithValue(testCtx(t), gateKey{}, true)
	exact := func(out chan<- error) {
		err := c.GetList(ctx, "/widgets", storage.ListOptions{Recursive: true, ResourceVersion: storage.RVAt(old),
			ResourceVersionMatch: metav1.ResourceVersionMatchExact, Predicate: storage.Everything}, &widget.WidgetList{})
		out <- err
	}

	first := make(chan error, 1)
	go exact(first)
	select {
	case <-store.held:
	case <-ctx.Done():
		t.Fatal("the first exact list never checked for a compaction")
	}
	if _, err := etcd.Client.Compact(ctx, int64(at)); err != nil {
		t.Fatal(err)
	}
	const later = 5
	results := make(chan error, later)
	for range later {
		go exact(results)
	}
	deadline := time.Now().Add(10 * time.Second)
	for cacher.CompactionWaitersForTest(c) < later && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := cacher.CompactionWaitersForTest(c); n < later {
		t.Errorf("%d of %d later exact lists wait for the check under way", n, later)
	}
	close(store.release)

	// The first list's check started before the compaction: either answer
	// is right for it.
	<-first
	for range later {
		if err := <-results; !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
			t.Errorf("exact list at %d asked for after etcd compacted to %d: %v, want 410", old, at, err)
		}
	}
	if n := store.marked.Load(); n != 2 {
		t.Errorf("compaction checks: %d for %d exact lists, want 2", n, later+1)
	}
}

// Watches whose start needs the storage's current revision (RV unset:
// the current state, then changes) that arrive while another one's read
// is under way share one read started after them, and each still gets a
// write finished before it was asked for.
func TestWatchStartsShareTheCurrentRevisionRead(t *testing.T) {
	checkSharedCurrentRevisionRead(t, "watches", func(ctx context.Context, c *cacher.Cacher) error {
		w, err := c.Watch(ctx, "/widgets", storage.ListOptions{Recursive: true, Predicate: storage.Everything})
		if err != nil {
			return err
		}
		defer w.Stop()
		for {
			select {
			case ev, ok := <-w.ResultChan():
				if !ok {
					return errors.New("the watch ended before the write")
				}
				if o, ok := ev.Object.(*widget.Widget); ok && o.Name == "written-before" {
					return nil
				}
			case <-ctx.Done():
				return errors.New("the watch never got the write")
			}
		}
	})
}
