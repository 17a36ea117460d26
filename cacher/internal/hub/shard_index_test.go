package hub

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/watchcache"
)

// shardWatchers adds n watchers of /widgets whose uid shards split the hash
// space in n equal ranges.
func shardWatchers(t testing.TB, c *shardRig, n int) []*Entry {
	step := (uint64(1) << 63) / uint64(n) * 2
	var ws []*Entry
	for i := range n {
		start := fmt.Sprintf("0x%016x", uint64(i)*step)
		end := fmt.Sprintf("0x%016x", uint64(i+1)*step)
		if i == n-1 {
			end = "0x10000000000000000"
		}
		sel, err := storage.ParseShardSelector(fmt.Sprintf("shardRange(object.metadata.uid, '%s', '%s')", start, end))
		if err != nil {
			t.Fatal(err)
		}
		ws = append(ws, c.addTestWatcher("/widgets", true, storage.SelectionPredicate{Shard: sel}))
	}
	return ws
}

func applyWithUID(t testing.TB, c *shardRig, i int, uid types.UID, rv uint64) *watchcache.Event {
	o := widget.NewWidget("ns", fmt.Sprintf("w%05d", i))
	o.UID, o.ResourceVersion = uid, fmt.Sprint(rv)
	ev, err := c.cache.Apply(watch.Added, o, rv)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// TestDispatchShardWatchersVisitOne: with 64 shard watchers covering the
// hash space, an event visits exactly the watcher of its shard (not all
// 64), and is queued to it.
func TestDispatchShardWatchersVisitOne(t *testing.T) {
	c := newShardRig(t)
	ws := shardWatchers(t, c, 64)
	for i := range 200 {
		ev := applyWithUID(t, c, i, uuid.NewUUID(), uint64(i+2))
		before := c.hub.reg.visited
		if n := c.hub.reg.dispatch(ev); n != 1 {
			t.Fatalf("event %d queued to %d shard watchers, want 1", i, n)
		}
		if v := c.hub.reg.visited - before; v != 1 {
			t.Fatalf("event %d visited %d shard watchers, want 1", i, v)
		}
	}
	for _, w := range ws[:32] {
		c.hub.reg.remove(w)
	}
	if n := len(c.hub.reg.byShard["/widgets/"]["object.metadata.uid"].ranges); n != 32 {
		t.Fatalf("%d ranges indexed after removing half the watchers, want 32", n)
	}
}

// BenchmarkDispatchShards: the dispatcher's cost per event with one
// unsharded watcher (shardWatchers=0) and with 1, 64 and 1,024 shard
// watchers splitting the resource; with the shard index each event visits
// one watcher, whatever the number of shards.
func BenchmarkDispatchShards(b *testing.B) {
	for _, shards := range []int{0, 1, 64, 1024} {
		b.Run(fmt.Sprintf("shardWatchers=%d", shards), func(b *testing.B) {
			c := newShardRig(b)
			if shards == 0 {
				c.addTestWatcher("/widgets", true, storage.Everything)
			} else {
				shardWatchers(b, c, shards)
			}
			evs := make([]*watchcache.Event, 1000)
			for i := range evs {
				evs[i] = applyWithUID(b, c, i, uuid.NewUUID(), uint64(i+2))
			}
			b.ResetTimer()
			before := c.hub.reg.visited
			for i := range b.N {
				c.hub.reg.dispatch(evs[i%len(evs)])
				if i%len(evs) == len(evs)-1 {
					b.StopTimer()
					for w := range c.hub.reg.all {
						w.Take(nil)
					}
					b.StartTimer()
				}
			}
			b.ReportMetric(float64(c.hub.reg.visited-before)/float64(b.N), "visits/event")
		})
	}
}

// acceptAll is a Member that takes every event directly.
type acceptAll struct{}

func (acceptAll) DrainDirect() bool             { return true }
func (acceptAll) DeliverDirect(*Published) bool { return true }
func (acceptAll) Resume()                       {}
func (acceptAll) Abort(error)                   {}

type noMetrics struct{}

func (noMetrics) WatcherLagged() {}

// shardRig is a cache of widgets at RV 1 and a hub, with no feed.
type shardRig struct {
	cache *watchcache.Cache
	hub   *Hub
}

func newShardRig(t testing.TB) *shardRig {
	cache, err := watchcache.New(watchcache.Config{KeyFunc: func(obj runtime.Object) (string, error) {
		a, err := meta.Accessor(obj)
		if err != nil {
			return "", err
		}
		return "/widgets/" + a.GetNamespace() + "/" + a.GetName(), nil
	}, GetAttrs: widget.GetAttrs, Versioner: storage.APIObjectVersioner{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := cache.Replace(nil, 1); err != nil {
		t.Fatal(err)
	}
	return &shardRig{cache: cache, hub: New(Config{Metrics: noMetrics{}})}
}

// addTestWatcher registers an entry of key with pred in live dispatch.
func (c *shardRig) addTestWatcher(key string, recursive bool, pred storage.SelectionPredicate) *Entry {
	pred.GetAttrs = widget.GetAttrs
	spec := Spec{Key: key, Recursive: recursive, Pred: pred, EmptyPred: pred.Empty()}
	if recursive {
		spec.Prefix = RecursivePrefix(key)
	}
	e := NewEntry(spec, acceptAll{}, 1<<16)
	c.hub.Add(e)
	return e
}
