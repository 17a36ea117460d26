package cacher_test

import (
	"errors"
	goruntime "runtime"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/watchcache"
)

// breakableCodec is the test codec until broken is set; then it cannot
// decode.
type breakableCodec struct {
	watchcache.RuntimeCodec
	broken atomic.Bool
}

func (c *breakableCodec) Decode(data []byte, rv uint64) (runtime.Object, error) {
	if c.broken.Load() {
		return nil, errors.New("codec broken")
	}
	return c.RuntimeCodec.Decode(data, rv)
}

// TestUndecodableObjectEndsWatch: a watch that meets an object its cache
// cannot decode gets one error event, and the watch ends there.
func TestUndecodableObjectEndsWatch(t *testing.T) {
	codec := &breakableCodec{RuntimeCodec: watchcache.RuntimeCodec{Codec: widget.Codec, New: widget.New,
		Versioner: storage.APIObjectVersioner{}}}
	metrics := &countingMetrics{}
	store := newStore(t, embedtest.Prefix(t), false)
	c := startCacher(t, store, func(cfg *cacher.Config) { cfg.Codec, cfg.Metrics = codec, metrics })
	from := create(t, store, "ns", "a", nil)
	last := create(t, store, "ns", "b", nil)
	// A list at b's RV: the cache holds both writes.
	list := &widget.WidgetList{}
	if err := c.GetList(testCtx(t), "/widgets", storage.ListOptions{ResourceVersion: storage.RVAt(last),
		Recursive: true, Predicate: storage.Everything}, list); err != nil || len(list.Items) != 2 {
		t.Fatalf("list: %d items, %v", len(list.Items), err)
	}
	codec.broken.Store(true)
	// Nothing holds the objects the cache was given any more: a full GC
	// clears the weak pointers to them, and the watch must decode b.
	goruntime.GC()
	goruntime.GC()
	w, err := c.Watch(testCtx(t), "/widgets", storage.ListOptions{ResourceVersion: storage.RVAt(from),
		Recursive: true, Predicate: storage.Everything})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if got := eventTypesUntilClosed(t, w); len(got) != 1 || got[0] != watch.Error {
		t.Fatalf("events %v, want one ERROR and the end of the watch", got)
	}
	if metrics.terminated.Load() != 1 {
		t.Fatalf("%d watchers counted as terminated, want 1", metrics.terminated.Load())
	}
}

// TestUndecodableInitialObjectEndsWatch: the same for the initial events
// of a watch from RV "0", read from elements the initial list loaded
// (which hold no decoded object).
func TestUndecodableInitialObjectEndsWatch(t *testing.T) {
	codec := &breakableCodec{RuntimeCodec: watchcache.RuntimeCodec{Codec: widget.Codec, New: widget.New,
		Versioner: storage.APIObjectVersioner{}}}
	store := newStore(t, embedtest.Prefix(t), false)
	create(t, store, "ns", "a", nil)
	c := startCacher(t, store, func(cfg *cacher.Config) { cfg.Codec = codec })
	codec.broken.Store(true)
	w, err := c.Watch(testCtx(t), "/widgets", storage.ListOptions{ResourceVersion: storage.RVAny, Recursive: true, Predicate: storage.Everything})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if got := eventTypesUntilClosed(t, w); len(got) != 1 || got[0] != watch.Error {
		t.Fatalf("events %v, want one ERROR and the end of the watch", got)
	}
}

// eventTypesUntilClosed returns the types of w's events until its channel
// closes, failing the test after 10 s.
func eventTypesUntilClosed(t *testing.T, w watch.Interface) []watch.EventType {
	t.Helper()
	var got []watch.EventType
	timeout := time.After(10 * time.Second)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return got
			}
			got = append(got, ev.Type)
		case <-timeout:
			t.Fatalf("the watch did not end; events so far: %v", got)
		}
	}
}
