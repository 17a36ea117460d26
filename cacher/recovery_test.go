package cacher_test

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/storage"
)

// When the cache's storage watch keeps failing on a value overwritten
// behind the store's back with bytes it cannot decode, the cacher counts
// it within about WatchRecoveryTimeout and relists around the value: the
// watches whose scope held the object end with an error event naming the
// failure, the watch of another namespace goes on, reads that would have
// to show the value are answered by the storage (naming it), and once the
// value is gone everything is served again.
func TestRecoveryFromRepeatingWatchError(t *testing.T) {
	prefix := embedtest.Prefix(t)
	m := &countingMetrics{}
	c := startCacher(t, newStore(t, prefix, false), func(cfg *cacher.Config) {
		cfg.Metrics = m
		cfg.WatchRecoveryTimeout = 500 * time.Millisecond
	})
	create(t, c, "ns", "foo", nil)
	from := create(t, c, "ns", "bar", nil)
	watches := []watch.Interface{watchAll(t, c, rvAt(from)), watchAll(t, c, storage.RVAny)}
	other, err := c.Watch(testCtx(t), "/widgets/other", storage.ListOptions{ResourceVersion: storage.RVAt(from),
		Recursive: true, Predicate: storage.Everything})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Stop()
	if _, err := etcd.Client.Put(testCtx(t), etcdPrefix(t)+key("ns", "foo"), "\x00 undecodable"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for i, w := range watches {
		for {
			ev := next(t, w, 10*time.Second)
			if ev.Type != watch.Error {
				continue // watch 1 starts with its initial ADDED events
			}
			st, ok := ev.Object.(*metav1.Status)
			if !ok || st.Code != 500 || !strings.Contains(st.Message, "decoded") {
				t.Fatalf("watch %d: error event %#v, want 500 naming the decoding failure", i, ev.Object)
			}
			break
		}
	}
	if d := time.Since(start); d > 8*time.Second {
		t.Errorf("watchers told after %v", d)
	}
	if n := m.reinitialized.Load(); n != 1 {
		t.Errorf("recovery counted %d times, want 1", n)
	}
	xRV := create(t, c, "other", "x", nil)
	if ev := next(t, other, 10*time.Second); ev.Type != watch.Added || rvOf(t, ev.Object) != xRV {
		t.Fatalf("the watch of another namespace: %s %v, want x ADDED", ev.Type, ev.Object)
	}
	// The cache is filled around foo: a watch whose initial state would
	// hold it is served by the storage, which names it.
	w0, err := c.Watch(testCtx(t), "/widgets", storage.ListOptions{ResourceVersion: storage.RVAny, Recursive: true})
	if err != nil {
		t.Fatalf("watch after the recovery: %v", err)
	}
	for {
		ev := next(t, w0, 10*time.Second)
		if ev.Type == watch.Error {
			break
		}
		if a, _ := meta.Accessor(ev.Object); a.GetName() == "foo" {
			t.Fatalf("watch after the recovery: %s of foo, which cannot be decoded", ev.Type)
		}
	}
	w0.Stop()
	if _, err := etcd.Client.Delete(testCtx(t), etcdPrefix(t)+key("ns", "foo")); err != nil {
		t.Fatal(err)
	}
	rv := create(t, c, "ns", "baz", nil)
	eventually(t, 10*time.Second, "lists answer normally", func() error {
		_, err := listNames(t, c, "/widgets", storage.RV{})
		return err
	})
	w := watchAll(t, c, rvAt(rv))
	create(t, c, "ns", "qux", nil)
	if ev := next(t, w, 10*time.Second); ev.Type != watch.Added {
		t.Fatalf("after recovery: %s, want ADDED", ev.Type)
	}
}
