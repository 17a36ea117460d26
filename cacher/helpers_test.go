package cacher_test

import (
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/watchcache"
)

// countingMetrics counts lagging and terminated watchers and re-initialisations.
type countingMetrics struct {
	cacher.NoopMetrics
	lagged, terminated, reinitialized atomic.Int64
	checks, diverged, persistent      atomic.Int64
}

func (m *countingMetrics) DivergencePersists() { m.persistent.Add(1) }

func (m *countingMetrics) WatcherLagged() { m.lagged.Add(1) }
func (m *countingMetrics) Reinitialized() { m.reinitialized.Add(1) }
func (m *countingMetrics) ConsistencyChecked(ok bool) {
	m.checks.Add(1)
	if !ok {
		m.diverged.Add(1)
	}
}
func (m *countingMetrics) WatcherTerminated(string) { m.terminated.Add(1) }

func key(ns, name string) string { return "/widgets/" + ns + "/" + name }

// create stores ns/name through s and returns its RV.
func create(t testing.TB, s storage.Interface, ns, name string, lbls map[string]string) uint64 {
	t.Helper()
	out := &widget.Widget{}
	if err := s.Create(testCtx(t), key(ns, name), widget.NewWidget(ns, name).WithLabels(lbls), out, 0); err != nil {
		t.Fatalf("create %s/%s: %v", ns, name, err)
	}
	return rvOf(t, out)
}

// bump increments ns/name's replicas through s and returns the new RV.
func bump(t testing.TB, s storage.Interface, ns, name string) uint64 {
	t.Helper()
	out := &widget.Widget{}
	err := s.GuaranteedUpdate(testCtx(t), key(ns, name), out, false, nil,
		func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
			w := in.(*widget.Widget).DeepCopy()
			w.Spec.Replicas++
			return w, nil, nil
		}, nil, storage.UpdateOptions{})
	if err != nil {
		t.Fatalf("bump %s/%s: %v", ns, name, err)
	}
	return rvOf(t, out)
}

func rvOf(t testing.TB, obj runtime.Object) uint64 {
	t.Helper()
	a, err := meta.Accessor(obj)
	if err != nil {
		t.Fatal(err)
	}
	rv, err := strconv.ParseUint(a.GetResourceVersion(), 10, 64)
	if err != nil {
		t.Fatalf("resourceVersion %q: %v", a.GetResourceVersion(), err)
	}
	return rv
}

// rvAt is the RV naming revision rv.
func rvAt(rv uint64) storage.RV { return storage.RVAt(rv) }

// mustRV parses the wire RV s.
func mustRV(t testing.TB, s string) storage.RV {
	t.Helper()
	rv, err := storage.ParseRV(s)
	if err != nil {
		t.Fatal(err)
	}
	return rv
}

// next returns the next non-bookmark event of w, failing after timeout.
func next(t testing.TB, w watch.Interface, timeout time.Duration) watch.Event {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatal("watch closed")
			}
			if ev.Type != watch.Bookmark {
				return ev
			}
		case <-deadline:
			t.Fatalf("no event within %v", timeout)
		}
	}
}

// expectRVs reads len(want) change events and checks their RVs in order.
func expectRVs(t testing.TB, w watch.Interface, want []uint64) {
	t.Helper()
	for i, rv := range want {
		ev := next(t, w, 10*time.Second)
		if ev.Type == watch.Error {
			t.Fatalf("event %d: error %v", i, ev.Object)
		}
		if got := rvOf(t, ev.Object); got != rv {
			t.Fatalf("event %d: %s at RV %d, want %d", i, ev.Type, got, rv)
		}
	}
}

func watchAll(t testing.TB, s storage.Interface, rv storage.RV) watch.Interface {
	t.Helper()
	w, err := s.Watch(testCtx(t), "/widgets", storage.ListOptions{ResourceVersion: rv, Recursive: true,
		Predicate: storage.Everything})
	if err != nil {
		t.Fatalf("Watch from %q: %v", rv, err)
	}
	t.Cleanup(w.Stop)
	return w
}

func names(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("w%04d", i)
	}
	return out
}

type runtimeObject = runtime.Object

func newWidget() runtime.Object     { return widget.New() }
func newWidgetList() runtime.Object { return widget.NewList() }

// keepEncoded makes a cacher keep its objects encoded by codec.
// It runs after the mods that set NewFunc.
func keepEncoded(codec runtime.Codec) func(*cacher.Config) {
	return func(cfg *cacher.Config) {
		cfg.Codec = watchcache.RuntimeCodec{Codec: codec, New: cfg.NewFunc, Versioner: storage.APIObjectVersioner{}}
	}
}

// listNames lists key through s at rv and returns the items' ns/name.
func listNames(t *testing.T, s storage.Interface, key string, rv storage.RV) ([]string, error) {
	t.Helper()
	list := widget.NewList()
	if err := s.GetList(testCtx(t), key, storage.ListOptions{ResourceVersion: rv, Recursive: true,
		Predicate: storage.Everything}, list); err != nil {
		return nil, err
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, it := range items {
		a, _ := meta.Accessor(it)
		out = append(out, a.GetNamespace()+"/"+a.GetName())
	}
	return out, nil
}

// eventually retries f until it succeeds, failing after within.
func eventually(t *testing.T, within time.Duration, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v: %v", what, within, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
