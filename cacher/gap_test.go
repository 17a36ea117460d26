package cacher_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/storage/counting"
)

// writeBeforeListStore writes, when armed, before the cacher's next list:
// the writes fall between the cache's revision and the list's, in no cache.
type writeBeforeListStore struct {
	*counting.Storage
	t     *testing.T
	armed atomic.Bool
	last  atomic.Uint64 // RV of the last write made
}

func (s *writeBeforeListStore) GetList(ctx context.Context, key string, opts storage.ListOptions, list runtime.Object) error {
	if opts.Predicate.Continue == "" && s.armed.Swap(false) {
		for _, n := range names(3) {
			s.last.Store(bump(s.t, s.Storage, "ns", n))
		}
	}
	return s.Storage.GetList(ctx, key, opts, list)
}

// After a relist, the watchers left behind by it rejoin through one shared
// read of etcd's history, not one storage watch each: 2,000 watchers get
// the events written in the gap and rejoin live dispatch quickly.
func TestRelistCatchUpIsShared(t *testing.T) {
	const n = 2000
	store := &writeBeforeListStore{Storage: counting.New(newStore(t, embedtest.Prefix(t), false)), t: t}
	c := startCacher(t, store)
	var rv uint64
	for _, name := range names(3) {
		rv = create(t, c, "ns", name, nil)
	}
	var got sync.WaitGroup
	watches := make([]watch.Interface, n)
	for i := range watches {
		watches[i] = watchAll(t, c, rvAt(rv))
	}
	store.armed.Store(true)
	before := store.Counts()
	start := time.Now()
	cacher.RelistForTest(c)
	eventually(t, 10*time.Second, "the relist", func() error {
		if store.armed.Load() || store.last.Load() == 0 {
			return context.DeadlineExceeded
		}
		return nil
	})
	want := store.last.Load()
	failed := atomic.Int64{}
	for _, w := range watches {
		got.Go(func() {
			for {
				select {
				case ev := <-w.ResultChan():
					if ev.Type == watch.Error {
						failed.Add(1)
						return
					}
					if rvOf(t, ev.Object) >= want {
						return
					}
				case <-time.After(20 * time.Second):
					failed.Add(1)
					return
				}
			}
		})
	}
	got.Wait()
	took := time.Since(start)
	if f := failed.Load(); f > 0 {
		t.Fatalf("%d of %d watchers did not get the gap's events", f, n)
	}
	watchesOpened := store.Counts().Sub(before).Watches
	t.Logf("%d watchers rejoined after a relist in %v with %d storage watches", n, took, watchesOpened)
	if watchesOpened > 2 { // the reflector's own, and the shared read
		t.Fatalf("%d storage watches opened for the catch-up of %d watchers, want at most 2", watchesOpened, n)
	}
}
