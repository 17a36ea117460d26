package cacher_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
)

// fastReads makes a read the cache cannot serve in time fail quickly
// instead of waiting the default 3 s.
func fastReads(cfg *cacher.Config) {
	cfg.FreshWaitTimeout = 2 * time.Second
	cfg.ConsistentReadTimeout = 2 * time.Second
}

// writeRaw stores w at key through s with GuaranteedUpdate, creating it
// (ignoreNotFound), whatever its metadata says, and returns its RV.
func writeRaw(t *testing.T, s storage.Interface, k string, w *widget.Widget) uint64 {
	t.Helper()
	out := &widget.Widget{}
	err := s.GuaranteedUpdate(testCtx(t), k, out, true, nil,
		func(runtime.Object, storage.ResponseMeta) (runtime.Object, *uint64, error) {
			return w.DeepCopy(), nil, nil
		}, nil, storage.UpdateOptions{})
	if err != nil {
		t.Fatalf("GuaranteedUpdate %s: %v", k, err)
	}
	return rvOf(t, out)
}

// nameless is a Widget with neither name nor namespace.
func nameless(replicas int64) *widget.Widget {
	return &widget.Widget{TypeMeta: metav1.TypeMeta{APIVersion: widget.GroupVersion.String(), Kind: "Widget"},
		Spec: widget.WidgetSpec{Replicas: replicas}}
}

// expectEndedFor reads w until its error event, which must be a
// StoreReadError whose Status (all its client sees) does not name key,
// while logs does; no change event may come first.
func expectEndedFor(t *testing.T, w watch.Interface, key string, logs fmt.Stringer) {
	t.Helper()
	ev := next(t, w, 10*time.Second)
	if ev.Type != watch.Error {
		t.Fatalf("got %s of %v, want the watch ended by %s", ev.Type, ev.Object, key)
	}
	st, ok := ev.Object.(*metav1.Status)
	if !ok || st.Reason != metav1.StatusReasonStoreReadError {
		t.Fatalf("error event %#v, want a StoreReadError", ev.Object)
	}
	if seen, _ := json.Marshal(st); strings.Contains(string(seen), key) {
		t.Fatalf("the client is told the storage key %s: %s", key, seen)
	}
	if !strings.Contains(logs.String(), key) {
		t.Fatalf("the log does not name %s:\n%s", key, logs)
	}
}

// The report: an object with no name written under /widgets/ns/b (through
// the cacher, which now refuses it; here through the storage) stopped the
// cache's RV, and reads at newer revisions failed after 3 s. The cache now
// applies that revision without the object, whose key the storage serves,
// ends the watches that cover it, and counts it.
func TestNamelessObjectDoesNotStallTheCache(t *testing.T) {
	store := newStore(t, embedtest.Prefix(t), false)
	create(t, store, "ns", "a", nil)
	rv0 := create(t, store, "other", "x", nil)
	m := &countingMetrics{}
	logs := &syncLog{}
	c := startCacher(t, store, fastReads, func(cfg *cacher.Config) {
		cfg.Metrics = m
		cfg.ConsistencyCheckInterval = 20 * time.Millisecond
		cfg.Logger = slog.New(slog.NewTextHandler(logs, nil))
	})
	all := watchAll(t, c, rvAt(rv0))
	one, err := c.Watch(testCtx(t), key("ns", "a"), storage.ListOptions{ResourceVersion: storage.RVAt(rv0),
		Predicate: storage.Everything})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(one.Stop)
	otherNS, err := c.Watch(testCtx(t), "/widgets/other", storage.ListOptions{ResourceVersion: storage.RVAt(rv0), Recursive: true,
		Predicate: storage.Everything})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(otherNS.Stop)

	writeRaw(t, store, key("ns", "b"), nameless(1)) // the cacher refuses it (TestCacherRefusesObjectsItCannotKey)
	rvC := create(t, c, "ns", "c", nil)
	start := time.Now()
	got, err := listNames(t, c, "/widgets", rvAt(rvC))
	if err != nil {
		t.Fatalf("list at RV %d after the nameless write: %v", rvC, err)
	}
	if want := []string{"ns/a", "/", "ns/c", "other/x"}; !slices.Equal(got, want) {
		t.Fatalf("list = %v, want %v (the nameless object served, not dropped)", got, want)
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("list at RV %d took %v", rvC, d)
	}
	if got, err := listNames(t, c, "/widgets/ns", storage.RV{}); err != nil || !slices.Equal(got, []string{"ns/a", "/", "ns/c"}) {
		t.Fatalf("consistent list of ns = %v, %v", got, err)
	}
	expectEndedFor(t, all, key("ns", "b"), logs)
	if m.persistent.Load() != 1 {
		t.Fatalf("DivergencePersists counted %d times, want 1", m.persistent.Load())
	}
	// Watches whose scope does not hold the key go on.
	rvA := bump(t, c, "ns", "a")
	rvX := bump(t, c, "other", "x")
	if ev := next(t, one, 10*time.Second); ev.Type != watch.Modified || rvOf(t, ev.Object) != rvA {
		t.Fatalf("watch of ns/a: %s %v, want MODIFIED at %d", ev.Type, ev.Object, rvA)
	}
	if ev := next(t, otherNS, 10*time.Second); ev.Type != watch.Modified || rvOf(t, ev.Object) != rvX {
		t.Fatalf("watch of other: %s %v, want MODIFIED at %d", ev.Type, ev.Object, rvX)
	}
	again := watchAll(t, c, rvAt(rvX))
	// The consistency check does not take the known key for a divergence.
	checks := m.checks.Load()
	eventually(t, 10*time.Second, "two more consistency checks", func() error {
		if m.checks.Load() < checks+2 && m.diverged.Load() == 0 {
			return context.DeadlineExceeded
		}
		return nil
	})
	if d := m.diverged.Load(); d != 0 {
		t.Fatalf("the consistency check found %d divergences", d)
	}
	// Updating it again ends the new watch too, and the cache still follows.
	rvB := writeRaw(t, store, key("ns", "b"), nameless(2))
	var gotB widget.Widget
	if err := c.Get(testCtx(t), key("ns", "b"), storage.GetOptions{ResourceVersion: storage.RVAt(rvB)}, &gotB); err != nil ||
		gotB.Spec.Replicas != 2 {
		t.Fatalf("Get of the nameless object at %d = %+v, %v", rvB, gotB, err)
	}
	expectEndedFor(t, again, key("ns", "b"), logs)
	if got, err := listNames(t, c, "/widgets/ns", rvAt(rvB)); err != nil || !slices.Equal(got, []string{"ns/a", "/", "ns/c"}) {
		t.Fatalf("list of ns at %d = %v, %v", rvB, got, err)
	}
	// Deleted, it is gone from lists, and the cache serves the scope again.
	var out widget.Widget
	if err := c.Delete(testCtx(t), key("ns", "b"), &out, nil, nil, nil, storage.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	rvD := rvOf(t, &out)
	if got, err := listNames(t, c, "/widgets/ns", rvAt(rvD)); err != nil || !slices.Equal(got, []string{"ns/a", "ns/c"}) {
		t.Fatalf("list of ns after the delete = %v, %v", got, err)
	}
	if got, err := listNames(t, c, "/widgets/ns", storage.RV{}); err != nil || !slices.Equal(got, []string{"ns/a", "ns/c"}) {
		t.Fatalf("consistent list of ns after the delete = %v, %v", got, err)
	}
}

// A nameless object already in etcd when the cacher starts does not keep
// it from becoming ready; lists serve it from the storage.
func TestNamelessObjectAtStartIsServed(t *testing.T) {
	store := newStore(t, embedtest.Prefix(t), false)
	create(t, store, "ns", "a", nil)
	writeRaw(t, store, key("ns", "b"), nameless(1))
	create(t, store, "ns2", "c", nil)
	m := &countingMetrics{}
	c, err := cacher.New(cacher.Config{Storage: store, ResourcePrefix: "/widgets", NewFunc: widget.New,
		NewListFunc: widget.NewList, GetAttrs: widget.GetAttrs, Metrics: m,
		FreshWaitTimeout: 2 * time.Second, ConsistentReadTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(runCacher(t, c))
	ctx, cancel := context.WithTimeout(testCtx(t), 10*time.Second)
	defer cancel()
	if err := c.WaitReady(ctx); err != nil {
		t.Fatalf("WaitReady: %v", err)
	}
	if got, err := listNames(t, c, "/widgets", storage.RV{}); err != nil || !slices.Equal(got, []string{"ns/a", "/", "ns2/c"}) {
		t.Fatalf("list = %v, %v", got, err)
	}
	if got, err := listNames(t, c, "/widgets/ns2", storage.RVAny); err != nil || !slices.Equal(got, []string{"ns2/c"}) {
		t.Fatalf("list of ns2 = %v, %v", got, err)
	}
	rv := bump(t, store, "ns2", "c")
	if got, err := listNames(t, c, "/widgets", rvAt(rv)); err != nil || len(got) != 3 {
		t.Fatalf("list at %d = %v, %v", rv, got, err)
	}
	if m.persistent.Load() == 0 {
		t.Fatal("the uncacheable object was not counted")
	}
	// Given a name, it is cached like any other object.
	w := watchAll(t, c, rvAt(rv))
	rvB := writeRaw(t, store, key("ns", "b"), widget.NewWidget("ns", "b"))
	if ev := next(t, w, 10*time.Second); ev.Type != watch.Added || rvOf(t, ev.Object) != rvB {
		t.Fatalf("watch: %s %v, want ADDED at %d", ev.Type, ev.Object, rvB)
	}
	if got, err := listNames(t, c, "/widgets", storage.RVAny); err != nil || !slices.Equal(got, []string{"ns/a", "ns/b", "ns2/c"}) {
		t.Fatalf("list from the cache = %v, %v", got, err)
	}
}

// Whatever metadata an object written at /widgets/ns/b has, the cache's RV
// goes past its revision: reads at later revisions are served at once.
// Through the cacher, an object it cannot key is refused instead.
func TestCacheAdvancesPastAnyMetadata(t *testing.T) {
	cases := []struct {
		name      string
		obj       *widget.Widget
		cacheable bool
	}{
		{"nameless", nameless(1), false},
		{"namespace only", &widget.Widget{TypeMeta: nameless(0).TypeMeta, ObjectMeta: metav1.ObjectMeta{Namespace: "ns"}}, false},
		{"no namespace", widget.NewWidget("", "b"), true},
		{"other name", widget.NewWidget("ns", "z"), true},
		{"other namespace", widget.NewWidget("ns9", "b"), true},
		{"another key's name", widget.NewWidget("ns", "a"), true},
	}
	for _, tc := range cases {
		for _, via := range []string{"cacher", "store", "etcd"} {
			if via == "cacher" && !tc.cacheable {
				continue
			}
			t.Run(fmt.Sprintf("%s via %s", tc.name, via), func(t *testing.T) {
				store := newStore(t, embedtest.Prefix(t), false)
				create(t, store, "ns", "a", nil)
				c := startCacher(t, store, fastReads)
				switch via {
				case "cacher":
					writeRaw(t, c, key("ns", "b"), tc.obj)
				case "store":
					writeRaw(t, store, key("ns", "b"), tc.obj)
				case "etcd":
					data, err := runtime.Encode(widget.Codec, tc.obj)
					if err != nil {
						t.Fatal(err)
					}
					if _, err := etcd.Client.Put(testCtx(t), etcdPrefix(t)+key("ns", "b"), string(data)); err != nil {
						t.Fatal(err)
					}
				}
				rv := create(t, store, "ns", "c", nil)
				start := time.Now()
				got, err := listNames(t, c, "/widgets", rvAt(rv))
				if err != nil {
					t.Fatalf("list at RV %d: %v", rv, err)
				}
				if d := time.Since(start); d > time.Second {
					t.Fatalf("list at RV %d took %v", rv, d)
				}
				if !slices.Contains(got, "ns/c") {
					t.Fatalf("list at RV %d = %v, without ns/c", rv, got)
				}
			})
		}
	}
}

// The cacher refuses to write an object it could not key (422 Invalid),
// and nothing reaches etcd: a create, an update creating the key
// (ignoreNotFound), and an update that would drop an object's name.
func TestCacherRefusesObjectsItCannotKey(t *testing.T) {
	store := newStore(t, embedtest.Prefix(t), false)
	create(t, store, "ns", "a", nil)
	c := startCacher(t, store)
	revision := func() int64 {
		resp, err := etcd.Client.Get(testCtx(t), etcdPrefix(t), clientv3.WithPrefix(), clientv3.WithCountOnly())
		if err != nil {
			t.Fatal(err)
		}
		return resp.Header.Revision
	}
	before := revision()
	refused := func(what string, err error) {
		t.Helper()
		if !storage.IsCode(err, storage.CodeInvalidObj) || !apierrors.IsInvalid(err) {
			t.Fatalf("%s: got %v, want a CodeInvalidObj (422 Invalid) error", what, err)
		}
	}
	refused("Create", c.Create(testCtx(t), key("ns", "b"), nameless(1), &widget.Widget{}, 0))
	refused("GuaranteedUpdate creating", c.GuaranteedUpdate(testCtx(t), key("ns", "b"), &widget.Widget{}, true, nil,
		func(runtime.Object, storage.ResponseMeta) (runtime.Object, *uint64, error) {
			return nameless(1), nil, nil
		}, nil, storage.UpdateOptions{}))
	refused("GuaranteedUpdate dropping the name", c.GuaranteedUpdate(testCtx(t), key("ns", "a"), &widget.Widget{}, false, nil,
		func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
			w := in.(*widget.Widget).DeepCopy()
			w.Name = ""
			return w, nil, nil
		}, nil, storage.UpdateOptions{}))
	if after := revision(); after != before {
		t.Fatalf("etcd's revision went from %d to %d: something was written", before, after)
	}
}
