package cacher

import (
	"context"
	"strconv"
	"testing"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/cacher/internal/history"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
)

// versionerOnly is the part of storage.Interface New touches.
type versionerOnly struct{ storage.Interface }

func (versionerOnly) Versioner() storage.Versioner { return storage.APIObjectVersioner{} }

// newDispatchCacher returns a cacher without storage, its cache at RV 1,
// whose feed a test drives by hand.
func newDispatchCacher(t testing.TB) *Cacher {
	c, err := New(Config{Storage: versionerOnly{}, ResourcePrefix: "/widgets", NewFunc: widget.New,
		NewListFunc: widget.NewList, GetAttrs: widget.GetAttrs, IndexLabels: []string{"app"},
		WatcherBufferSize: 1 << 16})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cache.Replace(nil, 1); err != nil {
		t.Fatal(err)
	}
	return c
}

// BenchmarkUncacheableCheck measures what the feed adds to every event to
// find objects the cache cannot hold (feed_uncacheable.go), next to
// BenchmarkApplyOneRevision, the feed's whole cost for a revision of one
// event without watchers.
func BenchmarkUncacheableCheck(b *testing.B) {
	c := newDispatchCacher(b)
	w := widget.NewWidget("ns", "a").WithLabels(map[string]string{"app": "x"})
	b.ReportAllocs()
	for b.Loop() {
		if err := c.f.uncacheable(w); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkApplyOneRevision measures applyRevision for a revision of one
// MODIFIED event, without watchers.
func BenchmarkApplyOneRevision(b *testing.B) {
	c := newDispatchCacher(b)
	objs := make([]*widget.Widget, 1024)
	for i := range objs {
		objs[i] = widget.NewWidget("ns", "w"+strconv.Itoa(i)).WithLabels(map[string]string{"app": "x"})
	}
	rv := uint64(1)
	batch := &history.Revision{}
	b.ReportAllocs()
	for b.Loop() {
		rv++
		o := objs[rv%uint64(len(objs))].DeepCopy()
		o.ResourceVersion = strconv.FormatUint(rv, 10)
		batch.Add(watch.Event{Type: watch.Modified, Object: o}, rv, "")
		if err := c.f.applyRevision(context.Background(), batch); err != nil {
			b.Fatal(err)
		}
	}
}
