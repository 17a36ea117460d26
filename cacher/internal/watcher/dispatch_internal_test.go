package watcher

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/watchcache"
)

func nameIs(n string) storage.SelectionPredicate {
	return storage.SelectionPredicate{Field: fields.OneTermEqualSelector("metadata.name", n)}
}

// 1,000 watchers on 1,000 single objects: an event visits only the watcher
// of its object, whichever way the watchers are scoped.
func TestDispatchVisitsOnlyMatchingWatchers(t *testing.T) {
	cases := []struct {
		name  string
		watch func(c *dispatchRig, i int) *Watcher
	}{
		{"name field selector", func(c *dispatchRig, i int) *Watcher {
			return c.addTestWatcher("/widgets", true, nameIs(fmt.Sprintf("w%04d", i)))
		}},
		{"single key", func(c *dispatchRig, i int) *Watcher {
			return c.addTestWatcher(fmt.Sprintf("/widgets/ns/w%04d", i), false, storage.Everything)
		}},
		{"namespace prefix", func(c *dispatchRig, i int) *Watcher {
			return c.addTestWatcher(fmt.Sprintf("/widgets/ns%04d", i), true, storage.Everything)
		}},
		{"indexed label", func(c *dispatchRig, i int) *Watcher {
			return c.addTestWatcher("/widgets", true, storage.SelectionPredicate{
				Label: labels.SelectorFromSet(labels.Set{"app": fmt.Sprintf("a%04d", i)})})
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := newDispatchRig(t)
			for i := range 1000 {
				tc.watch(c, i)
			}
			obj := widget.NewWidget("ns", "w0042").WithLabels(map[string]string{"app": "a0042"})
			if tc.name == "namespace prefix" {
				obj.Namespace = "ns0042"
			}
			obj.ResourceVersion = "2"
			ev, err := c.cache.Apply(watch.Added, obj, 2)
			if err != nil {
				t.Fatal(err)
			}
			before := c.hub.Visited()
			if n := c.dispatch(ev); n != 1 {
				t.Fatalf("event queued to %d watchers, want 1", n)
			}
			if v := c.hub.Visited() - before; v != 1 {
				t.Fatalf("dispatch visited %d watchers, want 1", v)
			}
		})
	}
}

// A label change reaches the watcher of the old value (it sees a DELETED)
// and of the new value (it sees an ADDED).
func TestDispatchUsesPreviousIndexValues(t *testing.T) {
	c := newDispatchRig(t)
	sel := func(v string) storage.SelectionPredicate {
		return storage.SelectionPredicate{Label: labels.SelectorFromSet(labels.Set{"app": v})}
	}
	wx := c.addTestWatcher("/widgets", true, sel("x"))
	wy := c.addTestWatcher("/widgets", true, sel("y"))
	apply := func(app string, rv uint64) *watchcache.Event {
		o := widget.NewWidget("ns", "a").WithLabels(map[string]string{"app": app})
		o.ResourceVersion = fmt.Sprint(rv)
		ev, err := c.cache.Apply(watch.Modified, o, rv)
		if err != nil {
			t.Fatal(err)
		}
		return ev
	}
	c.dispatch(apply("x", 2))
	ev := apply("y", 3)
	if n := c.dispatch(ev); n != 2 {
		t.Fatalf("relabel queued to %d watchers, want 2", n)
	}
	if out, ok := wx.convert(ev); !ok || out.Type != watch.Deleted || objRV(out.Object) != "3" {
		t.Fatalf("old-value watcher sees %v %v", out.Type, ok)
	}
	if out, ok := wy.convert(ev); !ok || out.Type != watch.Added {
		t.Fatalf("new-value watcher sees %v %v", out.Type, ok)
	}
}

func objRV(o runtime.Object) string { return o.(*widget.Widget).ResourceVersion }

// BenchmarkDispatch measures the dispatcher's cost per event with 1,000
// single-object watchers, against 1,000 unindexed watchers with a selector.
func BenchmarkDispatch(b *testing.B) {
	for _, mode := range []string{"indexed-by-name", "unindexed-selector"} {
		b.Run(mode, func(b *testing.B) {
			c := newDispatchRig(b)
			var ws []*Watcher
			for i := range 1000 {
				n := fmt.Sprintf("w%04d", i)
				if mode == "indexed-by-name" {
					ws = append(ws, c.addTestWatcher("/widgets", true, nameIs(n)))
				} else {
					ws = append(ws, c.addTestWatcher("/widgets", true, storage.SelectionPredicate{
						Label: labels.SelectorFromSet(labels.Set{"owner": n})}))
				}
			}
			var evs []*watchcache.Event
			for i := range 1000 {
				o := widget.NewWidget("ns", fmt.Sprintf("w%04d", i)).WithLabels(map[string]string{"owner": fmt.Sprintf("w%04d", i)})
				ev, err := c.cache.Apply(watch.Added, o, uint64(i+2))
				if err != nil {
					b.Fatal(err)
				}
				evs = append(evs, ev)
			}
			b.ReportAllocs()
			i := 0
			before := c.hub.Visited()
			for b.Loop() {
				c.dispatch(evs[i%1000])
				ws[i%1000].e.Take(nil)
				i++
			}
			b.ReportMetric(float64(c.hub.Visited()-before)/float64(i), "visits/event")
		})
	}
}
