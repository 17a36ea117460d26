package cacher_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/storage"
)

// pageLimitedStore refuses lists of more than max items (as gRPC refuses
// a response over its message limit) and writes an object between the
// pages of a list, to show that later pages are read at the first's
// revision.
type pageLimitedStore struct {
	storage.Interface
	t       *testing.T
	max     int64
	mu      sync.Mutex
	revs    []int64 // the revision of each page read
	written int
}

func (s *pageLimitedStore) GetList(ctx context.Context, key string, opts storage.ListOptions, list runtime.Object) error {
	if opts.Predicate.Limit == 0 || opts.Predicate.Limit > s.max {
		return fmt.Errorf("list of %d items refused: over the limit of %d", opts.Predicate.Limit, s.max)
	}
	if err := s.Interface.GetList(ctx, key, opts, list); err != nil {
		return err
	}
	la, err := meta.ListAccessor(list)
	if err != nil {
		return err
	}
	rv, err := s.Versioner().ParseResourceVersion(la.GetResourceVersion())
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.revs = append(s.revs, int64(rv))
	s.written++
	n := s.written
	s.mu.Unlock()
	if n <= 3 { // a write between pages, which the list must not see
		create(s.t, s.Interface, "late", fmt.Sprint(n), nil)
	}
	return nil
}

// The cacher fills its cache from pages of ListPageSize keys, all at the
// revision of the first: a store that cannot answer a list of the whole
// resource in one response still gets cached, and objects written between
// the pages arrive as events after the list, not inside it.
func TestListInPages(t *testing.T) {
	base := newStore(t, embedtest.Prefix(t), false)
	for _, n := range names(10) {
		create(t, base, "ns", n, nil)
	}
	store := &pageLimitedStore{Interface: base, t: t, max: 3}
	c := startCacher(t, store, func(cfg *cacher.Config) { cfg.ListPageSize = 3 })
	store.mu.Lock()
	revs := append([]int64(nil), store.revs...)
	store.mu.Unlock()
	if len(revs) < 4 {
		t.Fatalf("the cache was filled from %d lists, want at least 4 pages of 3", len(revs))
	}
	for i, r := range revs[:4] {
		if r != revs[0] {
			t.Fatalf("page %d read at revision %d, the first at %d", i, r, revs[0])
		}
	}
	got, err := listNames(t, c, "/widgets/ns", storage.RV{})
	if err != nil || len(got) != 10 {
		t.Fatalf("list from the cache: %v %v, want the 10 objects", got, err)
	}
	eventuallyLate := func() error {
		got, err := listNames(t, c, "/widgets/late", storage.RVAny)
		if err != nil || len(got) != 3 {
			return fmt.Errorf("late objects %v %v", got, err)
		}
		return nil
	}
	eventually(t, 10*time.Second, "the objects written between pages arrive as events", eventuallyLate)
}
