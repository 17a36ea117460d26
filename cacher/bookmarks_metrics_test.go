package cacher_test

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/storage"
)

// Watchers that allow bookmarks get one every BookmarkInterval, at an RV
// no lower than the events already delivered; others get none.
func TestPeriodicBookmarks(t *testing.T) {
	c := startCacher(t, newStore(t, embedtest.Prefix(t), false), func(cfg *cacher.Config) {
		cfg.BookmarkInterval = 20 * time.Millisecond
		cfg.ProgressInterval = 50 * time.Millisecond
	})
	last := create(t, c, "ns", "a", nil)
	with, err := c.Watch(testCtx(t), "/widgets", storage.ListOptions{ResourceVersion: storage.RVAny, Recursive: true,
		Predicate: storage.SelectionPredicate{AllowWatchBookmarks: true}})
	if err != nil {
		t.Fatal(err)
	}
	defer with.Stop()
	without := watchAll(t, c, storage.RVAny)
	last = bump(t, c, "ns", "a")
	deadline := time.After(10 * time.Second)
	var sawChange bool
	for {
		select {
		case ev := <-with.ResultChan():
			switch ev.Type {
			case watch.Bookmark:
				if rv := rvOf(t, ev.Object); sawChange && rv >= last {
					goto checkWithout
				} else if sawChange && rv < last {
					t.Fatalf("bookmark at %d after an event at %d", rv, last)
				}
			default:
				sawChange = sawChange || rvOf(t, ev.Object) == last
			}
		case <-deadline:
			t.Fatal("no bookmark after the last event")
		}
	}
checkWithout:
	timeout := time.After(200 * time.Millisecond)
	for {
		select {
		case ev := <-without.ResultChan():
			if ev.Type == watch.Bookmark {
				t.Fatal("bookmark sent to a watcher that did not allow them")
			}
		case <-timeout:
			return
		}
	}
}

// The Prometheus metrics register with the given registry and count what
// the cacher does.
func TestPrometheusMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := cacher.NewPrometheusMetrics(reg, "widgets")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cacher.NewPrometheusMetrics(reg, "widgets"); err == nil {
		t.Fatal("registering twice succeeded")
	}
	c := startCacher(t, newStore(t, embedtest.Prefix(t), false), func(cfg *cacher.Config) { cfg.Metrics = m })
	w := watchAll(t, c, storage.RV{})
	rv := create(t, c, "ns", "a", nil)
	expectRVs(t, w, []uint64{rv})
	for range 5 { // the watcher is live by now: these are dispatched
		rv = bump(t, c, "ns", "a")
		expectRVs(t, w, []uint64{rv})
	}
	values := map[string]float64{}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		for _, mt := range f.GetMetric() {
			switch {
			case mt.Counter != nil:
				values[f.GetName()] += mt.Counter.GetValue()
			case mt.Gauge != nil:
				values[f.GetName()] = mt.Gauge.GetValue()
			}
		}
	}
	if values["apiserver_watch_cache_events_received_total"] < 1 || values["apiserver_watch_cache_events_dispatched_total"] < 1 ||
		values["listwatch_cacher_watchers"] != 1 || values["apiserver_watch_cache_resource_version"] < float64(rv) {
		t.Fatalf("metrics: %v", values)
	}
}
