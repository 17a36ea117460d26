package cacher_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
)

// heldCacheStore holds the cacher's own lists of the whole resource until
// release is closed, so that its cache stays not ready, and counts the
// storage watches opened and still open.
type heldCacheStore struct {
	storage.Interface
	release      chan struct{}
	opened, open atomic.Int64
	scopes       sync.Map // key watched -> true
	releaseOnce  sync.Once
}

func (s *heldCacheStore) GetList(ctx context.Context, key string, opts storage.ListOptions, list runtime.Object) error {
	if strings.TrimSuffix(key, "/") == "/widgets" {
		select {
		case <-s.release:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return s.Interface.GetList(ctx, key, opts, list)
}

func (s *heldCacheStore) Watch(ctx context.Context, key string, opts storage.ListOptions) (watch.Interface, error) {
	w, err := s.Interface.Watch(ctx, key, opts)
	if err != nil {
		return nil, err
	}
	s.opened.Add(1)
	s.open.Add(1)
	s.scopes.Store(key, true)
	return &countedWatch{Interface: w, open: &s.open}, nil
}

// countedWatch counts down its store's open watches once, when stopped.
type countedWatch struct {
	watch.Interface
	open *atomic.Int64
	once sync.Once
}

func (w *countedWatch) Stop() {
	w.once.Do(func() { w.open.Add(-1) })
	w.Interface.Stop()
}

// relabel sets ns/name's label app through s and returns the new RV.
func relabel(t testing.TB, s storage.Interface, ns, name, app string) uint64 {
	t.Helper()
	out := &widget.Widget{}
	err := s.GuaranteedUpdate(testCtx(t), key(ns, name), out, false, nil,
		func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
			w := in.(*widget.Widget).DeepCopy()
			w.Labels = map[string]string{"app": app}
			return w, nil, nil
		}, nil, storage.UpdateOptions{})
	if err != nil {
		t.Fatalf("relabel %s/%s: %v", ns, name, err)
	}
	return rvOf(t, out)
}

// typedRV is an event's type and RV.
type typedRV struct {
	typ watch.EventType
	rv  uint64
}

// Watchers that catch up from the same revision of the same scope share
// one storage stream, each filtered by its own selector on it (an object
// that starts or stops matching is ADDED or DELETED for it), and the
// stream is held by its readers: it stays open while one of them reads it
// (the cache, not ready, cannot take over) and closes when the last one
// leaves.
func TestWatchersFromOneRVShareOneStorageWatch(t *testing.T) {
	const everything, selected = 4, 4
	store := &heldCacheStore{Interface: newStore(t, embedtest.Prefix(t), false), release: make(chan struct{})}
	t.Cleanup(func() { store.releaseOnce.Do(func() { close(store.release) }) })
	from := create(t, store, "ns", "a", map[string]string{"app": "a"})
	create(t, store, "ns", "b", map[string]string{"app": "b"})
	from = create(t, store, "elsewhere", "c", map[string]string{"app": "a"})
	m1 := bump(t, store, "ns", "a")
	m2 := bump(t, store, "ns", "b")
	m3 := relabel(t, store, "ns", "b", "a") // b starts matching app=a
	bump(t, store, "elsewhere", "c")        // out of scope
	m4 := bump(t, store, "ns", "b")
	m5 := relabel(t, store, "ns", "b", "b") // b stops matching
	m6 := bump(t, store, "ns", "a")
	all := []typedRV{{watch.Modified, m1}, {watch.Modified, m2}, {watch.Modified, m3}, {watch.Modified, m4},
		{watch.Modified, m5}, {watch.Modified, m6}}
	appA := []typedRV{{watch.Modified, m1}, {watch.Added, m3}, {watch.Modified, m4}, {watch.Deleted, m5}, {watch.Modified, m6}}

	c, err := cacher.New(cacher.Config{Storage: store, ResourcePrefix: "/widgets", NewFunc: widget.New,
		NewListFunc: widget.NewList, GetAttrs: widget.GetAttrs, ReadyWaitTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(runCacher(t, c))
	var watches []watch.Interface
	var wants [][]typedRV
	for i := range everything + selected {
		pred, want := storage.Everything, all
		if i >= everything {
			pred = storage.SelectionPredicate{Label: labels.SelectorFromSet(labels.Set{"app": "a"}),
				Field: fields.Everything(), GetAttrs: widget.GetAttrs}
			want = appA
		}
		w, err := c.Watch(testCtx(t), "/widgets/ns", storage.ListOptions{ResourceVersion: rvAt(from),
			Recursive: true, Predicate: pred})
		if err != nil {
			t.Fatalf("watch %d from %d: %v", i, from, err)
		}
		t.Cleanup(w.Stop)
		watches, wants = append(watches, w), append(wants, want)
	}
	for i, w := range watches {
		if err := readTyped(w, wants[i], 20*time.Second); err != nil {
			t.Fatalf("watcher %d: %v", i, err)
		}
	}
	if n := store.opened.Load(); n != 1 {
		t.Fatalf("%d storage watches opened for %d watchers from one RV of one scope, want 1", n, len(watches))
	}
	for i, w := range watches[:len(watches)-1] {
		w.Stop()
		if n := store.open.Load(); n != 1 {
			t.Fatalf("after %d of %d watchers stopped, %d storage watches open, want 1", i+1, len(watches), n)
		}
	}
	watches[len(watches)-1].Stop()
	eventually(t, 10*time.Second, "the shared storage watch to close with its last reader", func() error {
		if n := store.open.Load(); n != 0 {
			return fmt.Errorf("%d storage watches open", n)
		}
		return nil
	})
}

// Watchers from one RV in different scopes do not share: each scope has
// its storage stream (and only its keys' history is read).
func TestWatchersOfDifferentScopesReadApart(t *testing.T) {
	store := &heldCacheStore{Interface: newStore(t, embedtest.Prefix(t), false), release: make(chan struct{})}
	t.Cleanup(func() { store.releaseOnce.Do(func() { close(store.release) }) })
	from := create(t, store, "ns1", "a", nil)
	from = max(from, create(t, store, "ns2", "a", nil))
	want1 := []typedRV{{watch.Modified, bump(t, store, "ns1", "a")}}
	want2 := []typedRV{{watch.Modified, bump(t, store, "ns2", "a")}}
	c, err := cacher.New(cacher.Config{Storage: store, ResourcePrefix: "/widgets", NewFunc: widget.New,
		NewListFunc: widget.NewList, GetAttrs: widget.GetAttrs, ReadyWaitTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(runCacher(t, c))
	for ns, want := range map[string][]typedRV{"ns1": want1, "ns2": want2} {
		for range 2 {
			w, err := c.Watch(testCtx(t), "/widgets/"+ns, storage.ListOptions{ResourceVersion: rvAt(from),
				Recursive: true, Predicate: storage.Everything})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(w.Stop)
			if err := readTyped(w, want, 20*time.Second); err != nil {
				t.Fatalf("watcher of %s: %v", ns, err)
			}
		}
	}
	if n := store.opened.Load(); n != 2 {
		t.Fatalf("%d storage watches opened for two scopes, want 2", n)
	}
	for _, k := range []string{"/widgets/ns1/", "/widgets/ns2/"} {
		if _, ok := store.scopes.Load(k); !ok {
			t.Errorf("no storage watch of %s", k)
		}
	}
	// Once the cache is ready, the watchers move to it and the streams close.
	store.releaseOnce.Do(func() { close(store.release) })
	eventually(t, 10*time.Second, "the scopes' storage watches to close", func() error {
		if n := store.open.Load(); n != 1 { // the cacher's own
			return fmt.Errorf("%d storage watches open, want the cacher's own only", n)
		}
		return nil
	})
}

// readTyped reads from w exactly the events want (type and RV), in order,
// skipping bookmarks.
func readTyped(w watch.Interface, want []typedRV, timeout time.Duration) error {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for k := 0; k < len(want); {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return fmt.Errorf("closed after %d of %d events", k, len(want))
			}
			if ev.Type == watch.Bookmark {
				continue
			}
			if ev.Type == watch.Error {
				return fmt.Errorf("error %v", ev.Object)
			}
			got, err := objectRV(ev.Object)
			if err != nil {
				return err
			}
			if ev.Type != want[k].typ || got != want[k].rv {
				return fmt.Errorf("event %d is %s at RV %d, want %s at %d", k, ev.Type, got, want[k].typ, want[k].rv)
			}
			k++
		case <-deadline.C:
			return fmt.Errorf("only %d of %d events", k, len(want))
		}
	}
	return nil
}

// A watch that catches up through a shared read (here the cache is not
// ready, so it stays there) still gets the bookmark that precedes its
// deadline, at the last revision it handled.
func TestSharedReadSendsTheDeadlineBookmark(t *testing.T) {
	store := &heldCacheStore{Interface: newStore(t, embedtest.Prefix(t), false), release: make(chan struct{})}
	t.Cleanup(func() { store.releaseOnce.Do(func() { close(store.release) }) })
	from := create(t, store, "ns", "a", nil)
	last := bump(t, store, "ns", "a")
	c, err := cacher.New(cacher.Config{Storage: store, ResourcePrefix: "/widgets", NewFunc: widget.New,
		NewListFunc: widget.NewList, GetAttrs: widget.GetAttrs, ReadyWaitTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(runCacher(t, c))
	ctx, cancel := context.WithTimeout(testCtx(t), 3*time.Second)
	defer cancel()
	pred := storage.Everything
	pred.AllowWatchBookmarks = true
	w, err := c.Watch(ctx, "/widgets/ns", storage.ListOptions{ResourceVersion: rvAt(from), Recursive: true, Predicate: pred})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if err := readTyped(w, []typedRV{{watch.Modified, last}}, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	select {
	case ev := <-w.ResultChan():
		if ev.Type != watch.Bookmark || rvOf(t, ev.Object) != last {
			t.Fatalf("after the events: %s at %d, want the deadline BOOKMARK at %d", ev.Type, rvOf(t, ev.Object), last)
		}
	case <-ctx.Done():
		t.Fatal("no bookmark before the watch's deadline")
	}
}
