package reflector

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	krt "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
)

// The INFORMER scenario of shared/bench/WORKLOAD.md: a shared informer with
// 3 handlers over the cacher (over etcd3, JSON encoding, etcd without
// fsync), N objects of about 1 KiB in namespace "bench", then E updates.

const benchUpdates = 2000

var benchPad = strings.Repeat("x", 800)

// benchWidget is object i of the workload.
func benchWidget(i int) *widget.Widget {
	w := widget.NewWidget("bench", fmt.Sprintf("obj-%05d", i)).WithLabels(map[string]string{
		"app": fmt.Sprintf("app-%d", i%10), "tier": fmt.Sprintf("tier-%d", (i/10)%10),
	})

	w.Annotations = map[string]string{"pad": benchPad}
	w.Spec.NodeName = fmt.Sprintf("node-%d", i%100)
	return w
}

// loadBench creates n workload objects with a few concurrent writers.
func loadBench(b *testing.B, s storage.Interface, n int) {
	b.Helper()
	var wg sync.WaitGroup
	var failed atomic.Int64
	const writers = 16
	for g := 0; g < writers; g++ {
		wg.Go(func() {
			for i := g; i < n; i += writers {
				w := benchWidget(i)
				if err := s.Create(context.Background(), wkey("bench", w.Name), w, nil, 0); err != nil {
					failed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if failed.Load() > 0 {
		b.Fatalf("%d creates failed", failed.Load())
	}
}

// benchHandler counts adds and updates.
type benchHandler struct {
	adds, updates atomic.Int64
}

func (h *benchHandler) OnAdd(*widget.Widget, bool)    { h.adds.Add(1) }
func (h *benchHandler) OnUpdate(_, _ *widget.Widget)  { h.updates.Add(1) }
func (h *benchHandler) OnDelete(*widget.Widget, bool) {}
func heapInUse() uint64 {
	var m runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
func waitFor(b *testing.B, what string, deadline time.Duration, cond func() bool) {
	b.Helper()
	end := time.Now().Add(deadline)
	for !cond() {
		if time.Now().After(end) {
			b.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// startBenchInformer runs an informer with 3 handlers over s and waits
// until every handler has synced; stop ends it and waits.
func startBenchInformer(b *testing.B, s storage.Interface) (inf *SharedIndexInformer[*widget.Widget], hs []*benchHandler, stop func()) {
	lw := NewStorageListerWatcher(s, widgetsPrefix, widget.NewList, "")
	inf, err := newSharedIndexInformer[*widget.Widget](lw)
	if err != nil {
		b.Fatal(err)
	}
	var regs []ResourceEventHandlerRegistration
	for i := 0; i < 3; i++ {
		h := &benchHandler{}
		reg, err := inf.AddEventHandler(h)
		if err != nil {
			b.Fatal(err)
		}
		hs, regs = append(hs, h), append(regs, reg)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = inf.Run(ctx) }()
	waitFor(b, "sync", 5*time.Minute, func() bool {
		for _, r := range regs {
			if !r.HasSynced() {
				return false
			}
		}
		return true
	})
	return inf, hs, func() { cancel(); <-done }
}

func BenchmarkInformer(b *testing.B) {
	for _, n := range []int{10000, 50000} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			if n > 10000 && testing.Short() {
				b.Skip("scaling size skipped in -short mode")
			}
			store := newEtcdStore(b)
			loadBench(b, store, n)
			c := newCacher(b, store)

			for _, backend := range []struct {
				name string
				s    storage.Interface
			}{{"cacher", c}, {"etcd3", store}} {
				b.Run("sync/"+backend.name, func(b *testing.B) {
					b.ReportAllocs()
					var perObj float64
					for b.Loop() {
						before := heapInUse()
						inf, _, stop := startBenchInformer(b, backend.s)
						b.StopTimer()
						perObj = float64(heapInUse()-before) / float64(n)
						if got := len(inf.GetStore().ListKeys()); got != n {
							b.Fatalf("informer holds %d objects, want %d", got, n)
						}
						stop()
						b.StartTimer()
					}
					b.ReportMetric(perObj, "heap-B/obj")
					b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "objs/s")
				})
			}

			b.Run(fmt.Sprintf("events/E=%d", benchUpdates), func(b *testing.B) {
				b.ReportAllocs()
				_, hs, stop := startBenchInformer(b, c)
				defer stop()
				var total time.Duration
				for b.Loop() {
					base := hs[0].updates.Load()
					start := time.Now()
					benchUpdatesRoundRobin(b, store, n)
					waitFor(b, "handlers", 5*time.Minute, func() bool {
						for _, h := range hs {
							if h.updates.Load()-base < benchUpdates {
								return false
							}
						}
						return true
					})
					total += time.Since(start)
				}
				b.ReportMetric(float64(3*benchUpdates*b.N)/total.Seconds(), "handler-events/s")
			})
		})
	}
}

// benchUpdatesRoundRobin makes benchUpdates updates over the objects.
func benchUpdatesRoundRobin(b *testing.B, s storage.Interface, n int) {
	var wg sync.WaitGroup
	const writers = 16
	for g := 0; g < writers; g++ {
		wg.Go(func() {
			for i := g; i < benchUpdates; i += writers {
				name := fmt.Sprintf("obj-%05d", i%n)
				err := s.GuaranteedUpdate(context.Background(), wkey("bench", name), &widget.Widget{}, false, nil,
					func(in krt.Object, _ storage.ResponseMeta) (krt.Object, *uint64, error) {
						w := in.(*widget.Widget).DeepCopy()
						w.Spec.Replicas++
						return w, nil, nil
					}, nil, storage.UpdateOptions{})
				if err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}

// BenchmarkInformerDispatch measures the informer alone: a watch replayed
// from memory (no etcd) of E updates over N objects, fanned out to 3
// handlers; it reports handler calls per second.
func BenchmarkInformerDispatch(b *testing.B) {
	const n, e = 10000, 100000
	items := make([]*widget.Widget, n)
	for i := range items {
		items[i] = benchWidget(i)
		items[i].ResourceVersion = "1"
	}
	updates := make([]*widget.Widget, e)
	for i := range updates {
		w := items[i%n].DeepCopy()
		w.ResourceVersion = fmt.Sprint(2 + i)
		updates[i] = w
	}
	b.ReportAllocs()
	for b.Loop() {
		lw := &memLW{items: items, events: updates}
		inf, err := newSharedIndexInformer[*widget.Widget](lw)
		if err != nil {
			b.Fatal(err)
		}
		var hs []*benchHandler
		for i := 0; i < 3; i++ {
			h := &benchHandler{}
			if _, err := inf.AddEventHandler(h); err != nil {
				b.Fatal(err)
			}
			hs = append(hs, h)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); _ = inf.Run(ctx) }()
		waitFor(b, "dispatch", 5*time.Minute, func() bool {
			for _, h := range hs {
				if h.adds.Load()+h.updates.Load() < n+e {
					return false
				}
			}
			return true
		})
		cancel()
		<-done
	}
	b.ReportMetric(float64(3*(n+e)*b.N)/b.Elapsed().Seconds(), "handler-events/s")
}

// memLW lists items and then streams events as MODIFIED from memory.
type memLW struct {
	items  []*widget.Widget
	events []*widget.Widget
}

func (l *memLW) List(context.Context, metav1.ListOptions) (krt.Object, error) {
	list := &widget.WidgetList{ListMeta: metav1.ListMeta{ResourceVersion: "1"}}
	for _, w := range l.items {
		list.Items = append(list.Items, *w)
	}
	return list, nil
}

func (l *memLW) Watch(ctx context.Context, _ metav1.ListOptions) (watch.Interface, error) {
	ch := make(chan watch.Event, 1024)
	stream := l.events
	w := &chanWatch{ch: ch, stop: make(chan struct{})}
	go func() {
		defer close(ch)
		for _, obj := range stream {
			select {
			case ch <- watch.Event{Type: watch.Modified, Object: obj}:
			case <-w.stop:
				return
			case <-ctx.Done():
				return
			}
		}
		select { // keep the watch open until stopped
		case <-w.stop:
		case <-ctx.Done():
		}
	}()
	l.events = nil // a re-watch gets no replay
	return w, nil
}

type chanWatch struct {
	ch   chan watch.Event
	stop chan struct{}
	once sync.Once
}

func (w *chanWatch) ResultChan() <-chan watch.Event { return w.ch }
func (w *chanWatch) Stop()                          { w.once.Do(func() { close(w.stop) }) }
