package cacher_test

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
)

// dropNextUpdate makes c miss the first update of ns/name after RV after,
// however often its storage watch replays it.
func dropNextUpdate(c *cacher.Cacher, name string, after uint64) {
	var dropRV atomic.Uint64
	cacher.DropEventsForTest(c, func(typ watch.EventType, obj runtime.Object) bool {
		w, ok := obj.(*widget.Widget)
		if !ok || typ != watch.Modified || w.Name != name {
			return false
		}
		rv, err := strconv.ParseUint(w.ResourceVersion, 10, 64)
		if err != nil || rv <= after {
			return false
		}
		dropRV.CompareAndSwap(0, rv)
		return dropRV.Load() == rv
	})
}

// An object stored at a key that does not match its metadata makes the
// cache (keyed by metadata) differ from etcd (keyed by key) after any
// number of relists. The check relists once, then reports the difference
// once and leaves it: no relist storm, no watch ended again and again.
func TestConsistencyCheckReportsPersistentMismatchOnce(t *testing.T) {
	store := newStore(t, embedtest.Prefix(t), false)
	create(t, store, "ns", "a", nil)
	data, err := runtime.Encode(widget.Codec, widget.NewWidget("ns", "b"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := etcd.Client.Put(testCtx(t), etcdPrefix(t)+key("ns", "wrong"), string(data)); err != nil {
		t.Fatal(err)
	}
	m := &countingMetrics{}
	c := startCacher(t, store, func(cfg *cacher.Config) {
		cfg.Metrics = m
		cfg.ConsistencyCheckInterval = 20 * time.Millisecond
	})
	eventually(t, 10*time.Second, "the persisting difference is reported", func() error {
		if m.persistent.Load() == 0 {
			return context.DeadlineExceeded
		}
		return nil
	})
	other := watchAll(t, c, storage.RVAny)
	before := m.checks.Load()
	time.Sleep(300 * time.Millisecond) // about 15 more checks: none may relist or report again
	if d, p := m.diverged.Load(), m.persistent.Load(); d != 1 || p != 1 {
		t.Fatalf("divergences counted %d times and persistent ones %d times, want 1 and 1", d, p)
	}
	if m.checks.Load() != before {
		t.Fatalf("checks after the report counted as new verdicts: %d", m.checks.Load()-before)
	}
	rv := bump(t, store, "ns", "a")
	for {
		ev := next(t, other, 10*time.Second)
		if ev.Type == watch.Error {
			t.Fatalf("a watch was ended: %v", ev.Object)
		}
		if rvOf(t, ev.Object) == rv {
			break
		}
	}
}

// listGatedStore holds the cacher's own lists (recognised by their page size)
// while gate is set, and counts them.
type listGatedStore struct {
	storage.Interface
	pageSize int64
	lists    atomic.Int64
	gate     atomic.Pointer[chan struct{}]
}

// KeyVersions lets the consistency check run (storage.KeyVersionLister).
func (s *listGatedStore) KeyVersions(ctx context.Context, prefix string, rev int64, fn func(storage.KeyVersion) error) error {
	return s.Interface.(storage.KeyVersionLister).KeyVersions(ctx, prefix, rev, fn)
}

func (s *listGatedStore) GetList(ctx context.Context, key string, opts storage.ListOptions, list runtime.Object) error {
	if opts.Predicate.Limit == s.pageSize && opts.Predicate.Continue == "" {
		s.lists.Add(1)
		if g := s.gate.Load(); g != nil {
			select {
			case <-*g:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	return s.Interface.GetList(ctx, key, opts, list)
}

// From the moment a check finds the cache diverged until its relist has
// landed, reads that must be consistent (and reads at RV "0", and new
// watches' initial state) are served by the storage, never the stale
// cache; the checks meanwhile ask for no second relist.
func TestConsistencyRepairHasNoStaleWindow(t *testing.T) {
	store := &listGatedStore{Interface: newStore(t, embedtest.Prefix(t), false), pageSize: 777}
	m := &countingMetrics{}
	c := startCacher(t, store, func(cfg *cacher.Config) {
		cfg.Metrics = m
		cfg.ListPageSize = 777
		cfg.ConsistencyCheckInterval = 20 * time.Millisecond
	})
	last := create(t, store, "ns", "a", nil)
	gate := make(chan struct{})
	store.gate.Store(&gate)
	dropNextUpdate(c, "a", last)
	aRV := bump(t, store, "ns", "a") // the cache misses it
	eventually(t, 10*time.Second, "the repair's relist starts", func() error {
		if store.lists.Load() < 2 {
			return context.DeadlineExceeded
		}
		return nil
	})
	for _, rv := range []storage.RV{{}, storage.RVAny} {
		got := &widget.Widget{}
		if err := c.Get(testCtx(t), key("ns", "a"), storage.GetOptions{ResourceVersion: rv}, got); err != nil || rvOf(t, got) != aRV {
			t.Fatalf("Get at RV %q during the repair: a@%d (%v), want a@%d", rv, rvOf(t, got), err, aRV)
		}
		list := &widget.WidgetList{}
		if err := c.GetList(testCtx(t), "/widgets/ns", storage.ListOptions{ResourceVersion: rv, Recursive: true,
			Predicate: storage.Everything}, list); err != nil || len(list.Items) != 1 || rvOf(t, &list.Items[0]) != aRV {
			t.Fatalf("list at RV %q during the repair: %v (%v), want a@%d", rv, list.Items, err, aRV)
		}
	}
	w, err := c.Watch(testCtx(t), "/widgets/ns", storage.ListOptions{ResourceVersion: storage.RVAny, Recursive: true,
		Predicate: storage.Everything})
	if err != nil {
		t.Fatalf("watch during the repair: %v", err)
	}
	defer w.Stop()
	if ev := next(t, w, 10*time.Second); ev.Type != watch.Added || rvOf(t, ev.Object) != aRV {
		t.Fatalf("watch during the repair starts with %s at %d, want ADDED a@%d", ev.Type, rvOf(t, ev.Object), aRV)
	}
	time.Sleep(200 * time.Millisecond) // about 10 check periods while the relist is held
	store.gate.Store(nil)
	close(gate)
	eventually(t, 10*time.Second, "the cache serves again", func() error {
		if _, err := listNames(t, c, "/widgets", storage.RVAny); err != nil {
			return err
		}
		if m.checks.Load() < m.diverged.Load()+2 {
			return context.DeadlineExceeded // wait for two consistent checks after the relist
		}
		return nil
	})
	if n := store.lists.Load(); n != 2 {
		t.Fatalf("the cacher listed %d times, want 2 (the first list, one relist)", n)
	}
	if p := m.persistent.Load(); p != 0 {
		t.Fatalf("a difference the relist was still removing was reported as persistent %d times", p)
	}
}

// A watcher that is catching up (it fell behind: it left live dispatch)
// when the check finds its scope diverged is ended too.
func TestConsistencyRepairEndsCatchingUpWatchers(t *testing.T) {
	store := newStore(t, embedtest.Prefix(t), false)
	m := &countingMetrics{}
	c := startCacher(t, store, func(cfg *cacher.Config) {
		cfg.Metrics = m
		cfg.WatcherBufferSize = 1
		cfg.ConsistencyCheckInterval = 50 * time.Millisecond
	})
	from := create(t, store, "ns", "a", nil)
	w, err := c.Watch(testCtx(t), key("ns", "a"), storage.ListOptions{ResourceVersion: storage.RVAt(from), Predicate: storage.Everything})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	last := from
	for range 24 { // more than its result channel and queue hold: it lags
		last = bump(t, store, "ns", "a")
	}
	eventually(t, 10*time.Second, "the watcher lags", func() error {
		if m.lagged.Load() == 0 {
			return context.DeadlineExceeded
		}
		return nil
	})
	dropNextUpdate(c, "a", last)
	bump(t, store, "ns", "a")
	eventually(t, 10*time.Second, "the divergence is found", func() error {
		if m.diverged.Load() == 0 {
			return context.DeadlineExceeded
		}
		return nil
	})
	for {
		ev := next(t, w, 5*time.Second)
		if ev.Type == watch.Error {
			if st, ok := ev.Object.(*metav1.Status); !ok || !strings.Contains(st.Message, "diverged") {
				t.Fatalf("error event %v, want one naming the divergence", ev.Object)
			}
			return
		}
	}
}
