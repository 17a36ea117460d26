package etcd3

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
)

// The benchmarks follow /work/shared/bench/WORKLOAD.md: namespace "bench",
// objects obj-00000..., about 1 KiB of JSON each, labels app=app-<i%10> and
// tier=tier-<(i/10)%10>, spec.nodeName=node-<i%100>. They run against the
// package's shared embedded etcd (fsync off, see embedtest).

const benchN = 10000

func benchWidget(i int) *widget.Widget {
	w := widget.NewWidget("bench", fmt.Sprintf("obj-%05d", i)).WithLabels(map[string]string{
		"app":  fmt.Sprintf("app-%d", i%10),
		"tier": fmt.Sprintf("tier-%d", (i/10)%10),
	})

	w.Spec.NodeName = fmt.Sprintf("node-%d", i%100)
	w.Annotations = map[string]string{"pad": strings.Repeat("p", 820)}
	return w
}

func benchKey(i int) string { return fmt.Sprintf("/widgets/bench/obj-%05d", i) }

var (
	benchOnce  sync.Once
	benchStore *Store
	benchErr   error
)

// loadedBenchStore returns a store holding benchN objects, loaded once per
// process with a few concurrent writers.
func loadedBenchStore(b *testing.B) *Store {
	benchOnce.Do(func() {
		benchStore, benchErr = New(Config{Client: etcdServer.Client, Codec: widget.Codec, NewFunc: widget.New,
			NewListFunc: widget.NewList, Prefix: "/bench-loaded", ResourcePrefix: "/widgets"})
		if benchErr != nil {
			return
		}
		ctx := context.Background()
		if st, err := benchStore.Stats(ctx); err == nil && st.ObjectCount == benchN {
			return
		}
		var next atomic.Int64
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for range 8 {
			wg.Go(func() {
				for {
					i := int(next.Add(1)) - 1
					if i >= benchN {
						return
					}
					if err := benchStore.Create(ctx, benchKey(i), benchWidget(i), nil, 0); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		benchErr = <-errs
	})
	if benchErr != nil {
		b.Fatal(benchErr)
	}
	return benchStore
}

func BenchmarkCreate(b *testing.B) {
	s := newTestStore(b)
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if err := s.Create(ctx, benchKey(i), benchWidget(i), nil, 0); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func BenchmarkGet(b *testing.B) {
	s := loadedBenchStore(b)
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if err := s.Get(ctx, benchKey(i%benchN), storage.GetOptions{}, &widget.Widget{}); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func BenchmarkGuaranteedUpdate(b *testing.B) {
	s := newTestStore(b)
	ctx := context.Background()
	const keys = 100
	for i := range keys {
		if err := s.Create(ctx, benchKey(i), benchWidget(i), nil, 0); err != nil {
			b.Fatal(err)
		}
	}
	bump := func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
		w := in.(*widget.Widget)
		w.Spec.Replicas++
		return w, nil, nil
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if err := s.GuaranteedUpdate(ctx, benchKey(i%keys), &widget.Widget{}, false, nil, bump, nil, storage.UpdateOptions{}); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

func BenchmarkGetList(b *testing.B) {
	s := loadedBenchStore(b)
	ctx := context.Background()
	// The peer: a plain clientv3 range over the same keys, no decoding.
	b.Run("N=10000/plain-etcd-range", func(b *testing.B) {
		b.ReportAllocs()
		prefix, _ := s.prepareRecursiveKey("/widgets/bench")
		n := 0
		for b.Loop() {
			resp, err := etcdServer.Client.Get(ctx, prefix, clientv3.WithPrefix())
			if err != nil {
				b.Fatal(err)
			}
			n = len(resp.Kvs)
		}
		b.ReportMetric(float64(n), "objects/op")
	})
	for _, bc := range []struct {
		name string
		opts storage.ListOptions
	}{
		{"N=10000/all/RV=", storage.ListOptions{Recursive: true, Predicate: storage.Everything}},
		{"N=10000/all/RV=0", storage.ListOptions{Recursive: true, ResourceVersion: storage.RVAny, Predicate: storage.Everything}},
		{"N=10000/selector=app-3", storage.ListOptions{Recursive: true,
			Predicate: storage.SelectionPredicate{Label: labels.SelectorFromSet(labels.Set{"app": "app-3"})}}},
		{"N=10000/paged/limit=500", storage.ListOptions{Recursive: true, Predicate: storage.SelectionPredicate{Limit: 500}}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			items := 0
			for b.Loop() {
				items = 0
				opts := bc.opts
				for {
					l := &widget.WidgetList{}
					if err := s.GetList(ctx, "/widgets/bench", opts, l); err != nil {
						b.Fatal(err)
					}
					items += len(l.Items)
					if l.Continue == "" {
						break
					}
					opts.Predicate.Continue = l.Continue
				}
			}
			b.ReportMetric(float64(items), "objects/op")
		})
	}
}
