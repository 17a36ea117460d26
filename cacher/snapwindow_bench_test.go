package cacher_test

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
)

// BenchmarkExactListFarBack lists 2,000 objects exactly at revisions
// 1,100 to 1,500 revisions back (past the 1,024 newest snapshots, within
// the event history), a different one each time (run at most 400
// iterations: -benchtime 400x), through the cacher, as Kubernetes'
// ListerExactRV does.
func BenchmarkExactListFarBack(b *testing.B) {
	const objects, updates = 2000, 1500
	store := newStore(b, embedtest.Prefix(b), false)
	c := startCacher(b, store, func(cfg *cacher.Config) { cfg.ConsistencyCheckInterval, cfg.SpacedSnapshots = -1, true })
	for i := range objects {
		create(b, store, "ns", fmt.Sprintf("w%04d", i), nil)
	}
	var at []uint64
	var last uint64
	for i := range updates {
		last = bump(b, store, "ns", fmt.Sprintf("w%04d", (i*7)%objects))
		if i < 400 {
			at = append(at, last)
		}
	}
	ctx := testCtx(b)
	if err := c.Get(ctx, key("ns", "w0000"), storage.GetOptions{ResourceVersion: storage.RVAt(last)}, &widget.Widget{}); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i == len(at) {
			b.Fatalf("more than %d iterations", len(at))
		}
		opts := storage.ListOptions{Recursive: true, ResourceVersion: storage.RVAt(at[i]),
			ResourceVersionMatch: metav1.ResourceVersionMatchExact}
		i++
		list := &widget.WidgetList{}
		if err := c.GetList(ctx, "/widgets", opts, list); err != nil {
			b.Fatal(err)
		}
		if len(list.Items) != objects {
			b.Fatalf("%d items, want %d", len(list.Items), objects)
		}
	}
}
