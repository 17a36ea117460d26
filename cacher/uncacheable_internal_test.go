package cacher

import (
	"context"
	"strconv"
	"testing"

	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/examples/widget"
)

// BenchmarkUncacheableCheck measures what the feed adds to every event to
// find objects the cache cannot hold (feed_uncacheable.go), next to
// BenchmarkApplyOneRevision, the feed's whole cost for a revision of one
// event without watchers.
func BenchmarkUncacheableCheck(b *testing.B) {
	c := newDispatchCacher(b)
	w := widget.NewWidget("ns", "a").WithLabels(map[string]string{"app": "x"})
	b.ReportAllocs()
	for b.Loop() {
		if err := c.uncacheable(w); err != nil {
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
	batch := &revisionBatch{whole: true}
	b.ReportAllocs()
	for b.Loop() {
		rv++
		o := objs[rv%uint64(len(objs))].DeepCopy()
		o.ResourceVersion = strconv.FormatUint(rv, 10)
		batch.rv = rv
		batch.events = append(batch.events, watch.Event{Type: watch.Modified, Object: o})
		if err := c.applyRevision(context.Background(), batch); err != nil {
			b.Fatal(err)
		}
	}
}
