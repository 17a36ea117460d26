package cacher_test

import (
	"encoding/json"
	"strings"
	"sync"
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

// TestConsistencyCheckRepairsDivergence: the cache misses one update (a
// test seam drops it). The periodic check finds the key whose RV differs
// from etcd's, counts it, ends the watch whose scope holds that key with an
// error, relists so that reads serve etcd's state again, and keeps the
// watch of another namespace, which goes on receiving events.
func TestConsistencyCheckRepairsDivergence(t *testing.T) {
	store := newStore(t, embedtest.Prefix(t), false)
	m := &countingMetrics{}
	c := startCacher(t, store, func(cfg *cacher.Config) {
		cfg.Metrics = m
		cfg.ConsistencyCheckInterval = 200 * time.Millisecond
	})
	create(t, store, "ns", "a", nil)
	create(t, store, "other", "x", nil)
	cur := rvAt(bump(t, store, "other", "x"))
	onA, err := c.Watch(testCtx(t), key("ns", "a"), storage.ListOptions{ResourceVersion: cur, Predicate: storage.Everything})
	if err != nil {
		t.Fatal(err)
	}
	defer onA.Stop()
	onOther, err := c.Watch(testCtx(t), "/widgets/other", storage.ListOptions{ResourceVersion: cur, Recursive: true, Predicate: storage.Everything})
	if err != nil {
		t.Fatal(err)
	}
	defer onOther.Stop()

	var once sync.Once
	cacher.DropEventsForTest(c, func(typ watch.EventType, obj runtime.Object) bool {
		dropped := false
		if w, ok := obj.(*widget.Widget); ok && typ == watch.Modified && w.Name == "a" {
			once.Do(func() { dropped = true })
		}
		return dropped
	})
	aRV := bump(t, store, "ns", "a") // the cache misses it
	ev := next(t, onA, 20*time.Second)
	st, ok := ev.Object.(*metav1.Status)
	if ev.Type != watch.Error || !ok || st.Code != 500 || !strings.Contains(st.Message, "diverged") {
		t.Fatalf("watch of the diverged key: %s %v, want a 500 error naming the divergence", ev.Type, ev.Object)
	}
	if seen, _ := json.Marshal(st); strings.Contains(string(seen), key("ns", "a")) {
		t.Fatalf("the client is told the storage key: %s", seen)
	}
	if m.diverged.Load() == 0 {
		t.Error("the divergence was not counted")
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		got := &widget.Widget{}
		if err := c.Get(testCtx(t), key("ns", "a"), storage.GetOptions{ResourceVersion: storage.RVAny}, got); err != nil {
			t.Fatal(err)
		}
		if rvOf(t, got) == aRV {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("cache still serves a@%d after the relist, etcd has a@%d", rvOf(t, got), aRV)
		}
		time.Sleep(50 * time.Millisecond)
	}
	xRV := bump(t, store, "other", "x")
	for {
		ev := next(t, onOther, 20*time.Second)
		if ev.Type == watch.Error {
			t.Fatalf("the watch of another namespace was ended: %v", ev.Object)
		}
		if ev.Type == watch.Modified && rvOf(t, ev.Object) == xRV {
			break
		}
	}
}

// TestConsistencyCheckQuietUnderWrites: checks that run while writes keep
// coming find no difference (the cache is compared with etcd at the
// cache's own revision), and end no watch.
func TestConsistencyCheckQuietUnderWrites(t *testing.T) {
	store := newStore(t, embedtest.Prefix(t), false)
	m := &countingMetrics{}
	c := startCacher(t, store, func(cfg *cacher.Config) {
		cfg.Metrics = m
		cfg.ConsistencyCheckInterval = 20 * time.Millisecond
	})
	for _, n := range names(20) {
		create(t, store, "ns", n, nil)
	}
	w := watchAll(t, c, rvAt(bump(t, store, "ns", names(20)[0])))
	defer w.Stop()
	before := m.checks.Load()
	var wg sync.WaitGroup
	for g := range 2 {
		wg.Go(func() {
			for i := range 100 {
				bump(t, store, "ns", names(20)[(i*7+g)%20])
			}
		})
	}
	wg.Wait()
	if during := m.checks.Load() - before; during < 3 {
		t.Fatalf("only %d checks ran during the writes; the test needs several", during)
	}
	if d := m.diverged.Load(); d != 0 {
		t.Fatalf("%d of %d checks found a difference while the cache was consistent", d, m.checks.Load())
	}
	for got := 0; got < 200; {
		ev := next(t, w, 20*time.Second)
		if ev.Type == watch.Error {
			t.Fatalf("watch ended: %v", ev.Object)
		}
		if ev.Type == watch.Modified {
			got++
		}
	}
}
