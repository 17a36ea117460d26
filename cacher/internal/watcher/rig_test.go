package watcher

import (
	goruntime "runtime"

	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/clock"

	"github.com/listwatch/listwatch/cacher/internal/hub"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/watchcache"
)

// widgetKey keys widgets as the cacher's default KeyFunc does under /widgets.
func widgetKey(obj runtime.Object) (string, error) {
	a, err := meta.Accessor(obj)
	if err != nil {
		return "", err
	}
	return "/widgets/" + a.GetNamespace() + "/" + a.GetName(), nil
}

// newWidgetCache returns a cache of widgets at RV 1, indexed by the
// label app.
func newWidgetCache(t testing.TB) *watchcache.Cache {
	cache, err := watchcache.New(watchcache.Config{KeyFunc: widgetKey, GetAttrs: widget.GetAttrs,
		Versioner: storage.APIObjectVersioner{}, IndexLabels: []string{"app"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := cache.Replace(nil, 1); err != nil {
		t.Fatal(err)
	}
	return cache
}

// dispatchRig is a cache, a hub and the watchers' Env with no storage
// behind them: the feed is driven by hand.
type dispatchRig struct {
	cache *watchcache.Cache
	hub   *hub.Hub
	env   *Env
}

type noMetrics struct{}

func (noMetrics) WatchersChanged(int)      {}
func (noMetrics) WatcherTerminated(string) {}
func (noMetrics) WatcherLagged()           {}

func newDispatchRig(t testing.TB) *dispatchRig {
	cache := newWidgetCache(t)
	h := hub.New(hub.Config{IndexLabels: []string{"app"}, Wall: clock.RealClock{}, Metrics: noMetrics{}, CacheRV: cache.RV})
	env := &Env{Source: memHistory{cache}, Hub: h, Wall: clock.RealClock{}, Metrics: noMetrics{},
		Versioner: storage.APIObjectVersioner{}, NewFunc: widget.New, KeyFunc: widgetKey,
		CatchUpBatch: 256, BufferSize: 1 << 16}
	return &dispatchRig{cache: cache, hub: h, env: env}
}

// addTestWatcher registers a watcher of key in live dispatch, not started:
// nothing takes what the hub cannot deliver to it (see Watcher.Resume).
func (c *dispatchRig) addTestWatcher(key string, recursive bool, pred storage.SelectionPredicate) *Watcher {
	pred.GetAttrs = widget.GetAttrs
	w := c.env.New(key, storage.ListOptions{Recursive: recursive, Predicate: pred})
	c.hub.Add(w.e)
	return w
}

// dispatch dispatches ev as the feed does and returns how many watchers got it.
func (c *dispatchRig) dispatch(ev *watchcache.Event) int {
	n := 0
	_ = c.hub.Commit(func(tx hub.Tx) error { n = tx.Dispatch(ev); return nil })
	return n
}

// runtimeGosched yields while a benchmark waits for its watchers to join.
func runtimeGosched() { goruntime.Gosched() }
