package cacher_test

import (
	"context"
	"sync/atomic"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/storage/etcd3"
)

// compactingStore compacts etcd to `at` (once armed) when the cacher asks
// it for the compacted revision, before answering: a compaction that lands
// while the cache is already listing the revision asked for.
type compactingStore struct {
	*etcd3.Store
	at atomic.Int64
}

func (s *compactingStore) RefreshCompactRevision(ctx context.Context) (int64, error) {
	if at := s.at.Swap(0); at > 0 {
		if _, err := etcd.Client.Compact(ctx, at); err != nil {
			return 0, err
		}
	}
	return s.Store.RefreshCompactRevision(ctx)
}

// An exact list checks for a compaction while it lists the cache: a
// compaction the check reports makes the answer 410 although the cache
// had already listed (and filled) the revision; at the compacted revision
// the list is served.
func TestExactListCompactedWhileListing(t *testing.T) {
	store := &compactingStore{Store: newStore(t, embedtest.Prefix(t), false)}
	c := startCacher(t, store)
	ctx := testCtx(t)
	create(t, c, "ns", "a", nil)
	old := bump(t, c, "ns", "a")
	create(t, c, "ns", "b", nil)
	at := bump(t, c, "ns", "a")
	bump(t, c, "ns", "b")

	exact := func(rv uint64) (*widget.WidgetList, error) {
		list := &widget.WidgetList{}
		err := c.GetList(ctx, "/widgets", storage.ListOptions{Recursive: true, ResourceVersion: storage.RVAt(rv),
			ResourceVersionMatch: metav1.ResourceVersionMatchExact}, list)
		return list, err
	}
	if list, err := exact(old); err != nil || len(list.Items) != 1 {
		t.Fatalf("exact list at %d before any compaction: %d items, %v; want 1 item", old, len(list.Items), err)
	}
	store.at.Store(int64(at))
	if _, err := exact(old); !apierrors.IsResourceExpired(err) && !apierrors.IsGone(err) {
		t.Fatalf("exact list at %d compacted (to %d) during the list: %v, want 410", old, at, err)
	}
	list, err := exact(at)
	if err != nil || len(list.Items) != 2 || list.ResourceVersion != rvAt(at).String() {
		t.Fatalf("exact list at the compacted revision %d: %d items at %q, %v; want 2 at %d", at, len(list.Items),
			list.ResourceVersion, err, at)
	}
}
