package bench

import (
	"context"
	"fmt"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
)

// listSource is a source with the RV a list asks for.
type listSource struct {
	source
	label string // the sub-benchmark's source name
	rv    storage.RV
}

// listSources: etcd (RV "", a linearizable range), and the cache at RV "0"
// and at RV "" (consistent read from the cache).
func (f *fixture) listSources() []listSource {
	var out []listSource
	for _, s := range f.sources() {
		if s.name == "etcd" {
			out = append(out, listSource{s, "etcd", storage.RV{}})
			continue
		}
		out = append(out, listSource{s, s.name + "-rv0", storage.RVAny}, listSource{s, s.name + "-consistent", storage.RV{}})
	}
	return out
}

// BenchmarkList is LIST: all N objects, 20 runs per iteration.
func BenchmarkList(b *testing.B) {
	f := getFixture(b)
	for _, src := range f.listSources() {
		b.Run(fmt.Sprintf("N=%d/source=%s", f.n, src.label), func(b *testing.B) {
			runLists(b, src, storage.SelectionPredicate{GetAttrs: widget.GetAttrs}, 20, f.n)
		})
	}
}

// BenchmarkListSelector is LIST-SEL: labelSelector app=app-3, 20 runs.
func BenchmarkListSelector(b *testing.B) {
	f := getFixture(b)
	sel := labels.SelectorFromSet(labels.Set{"app": "app-3"})
	for _, src := range f.listSources() {
		b.Run(fmt.Sprintf("N=%d/sel=app-3/source=%s", f.n, src.label), func(b *testing.B) {
			runLists(b, src, storage.SelectionPredicate{Label: sel, GetAttrs: widget.GetAttrs}, 20, (f.n+6)/10)
		})
	}
}

func runLists(b *testing.B, src listSource, pred storage.SelectionPredicate, runs, want int) {
	ctx := context.Background()
	var ds []time.Duration
	items := 0
	b.ReportAllocs()
	for b.Loop() {
		for range runs {
			list := &widget.WidgetList{}
			start := time.Now()
			err := src.s.GetList(ctx, resourcePrefix, storage.ListOptions{
				ResourceVersion: src.rv, Recursive: true, Predicate: pred}, list)
			ds = append(ds, time.Since(start))
			if err != nil {
				b.Fatal(err)
			}
			items = len(list.Items)
		}
	}
	if items != want {
		b.Fatalf("listed %d objects, want %d", items, want)
	}
	b.ReportMetric(Ms(Percentile(ds, 50)), "p50-ms")
	b.ReportMetric(Ms(Percentile(ds, 90)), "p90-ms")
	b.ReportMetric(float64(items), "objects")
}

// BenchmarkPage is PAGE: pages of 500 until done, 10 runs; storage-calls is
// the requests per walk that reached the etcd3 store.
func BenchmarkPage(b *testing.B) {
	f := getFixture(b)
	for _, src := range f.listSources() {
		b.Run(fmt.Sprintf("N=%d/limit=500/source=%s", f.n, src.label), func(b *testing.B) {
			runPages(b, src, 10, f.n)
		})
	}
}

func runPages(b *testing.B, src listSource, runs, want int) {
	ctx := context.Background()
	var ds []time.Duration
	var pages, items int
	before := src.backend.Counts()
	walks := 0
	b.ReportAllocs()
	for b.Loop() {
		for range runs {
			start := time.Now()
			pages, items = 0, 0
			cont := ""
			for {
				list := &widget.WidgetList{}
				opts := storage.ListOptions{ResourceVersion: src.rv, Recursive: true,
					Predicate: storage.SelectionPredicate{GetAttrs: widget.GetAttrs, Limit: 500, Continue: cont}}
				if cont != "" {
					opts.ResourceVersion = storage.RV{}
				}
				if err := src.s.GetList(ctx, resourcePrefix, opts, list); err != nil {
					b.Fatal(err)
				}
				pages++
				items += len(list.Items)
				if cont = list.Continue; cont == "" {
					break
				}
			}
			ds = append(ds, time.Since(start))
			walks++
		}
	}
	if items != want {
		b.Fatalf("paged through %d objects, want %d", items, want)
	}
	calls := src.backend.Counts().Sub(before).Requests()
	b.ReportMetric(Ms(Percentile(ds, 50)), "p50-ms")
	b.ReportMetric(float64(pages), "pages")
	b.ReportMetric(float64(calls)/float64(walks), "storage-calls")
}
