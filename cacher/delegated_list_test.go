package cacher_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/storage"
)

// aheadStore reports a current revision ahead of etcd's by ahead, so that
// the cache never catches up with it.
type aheadStore struct {
	storage.Interface
	ahead atomic.Uint64
}

func (s *aheadStore) GetCurrentResourceVersion(ctx context.Context) (uint64, error) {
	rv, err := s.Interface.GetCurrentResourceVersion(ctx)
	return rv + s.ahead.Load(), err
}

// A consistent list the cache cannot serve in time is answered by the
// storage alone: what the cache may have filled the list with meanwhile
// is not kept (the storage appends to the list's items).
func TestDelegatedConsistentListHasNoDuplicates(t *testing.T) {
	store := &aheadStore{Interface: newStore(t, embedtest.Prefix(t), false)}
	create(t, store, "ns", "a", nil)
	create(t, store, "ns", "b", nil)
	c := startCacher(t, store, func(cfg *cacher.Config) { cfg.ConsistentReadTimeout = 100 * time.Millisecond })
	store.ahead.Store(1000)
	got, err := listNames(t, c, "/widgets", storage.RV{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"ns/a", "ns/b"}; !slices.Equal(got, want) {
		t.Fatalf("consistent list = %v, want %v", got, want)
	}
}
