package reflector

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/sharding"

	"github.com/listwatch/listwatch/examples/widget"
)

// TestShardInformers: two informers, each over one half of the namespace
// hash space (reflector.TweakListOptions setting ShardSelector), hold
// disjoint parts of the resource that together are all of it, and each
// hears only of the updates of its shard.
func TestShardInformers(t *testing.T) {
	store := newEtcdStore(t)
	var nss []string
	for _, ns := range []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet", "kilo", "lima"} {
		nss = append(nss, ns)
		if err := store.Create(testCtx(t), widgetsPrefix+"/"+ns+"/w", widget.NewWidget(ns, "w"), nil, 0); err != nil {
			t.Fatal(err)
		}
	}
	half := []string{
		"shardRange(object.metadata.namespace, '0x0000000000000000', '0x8000000000000000')",
		"shardRange(object.metadata.namespace, '0x8000000000000000', '0x10000000000000000')",
	}
	var infs []*SharedIndexInformer[*widget.Widget]
	for _, sel := range half {
		lw := TweakListOptions(NewStorageListerWatcher(store, widgetsPrefix, widget.NewList, ""),
			func(o *metav1.ListOptions) { o.ShardSelector = sel })
		inf := newTestInformer(t, lw)
		startInformer(t, inf)
		infs = append(infs, inf)
	}
	inLow := func(ns string) bool { return sharding.HexLess("0x"+sharding.HashField(ns), "0x8000000000000000") }
	want := [2]int{}
	for _, ns := range nss {
		if inLow(ns) {
			want[0]++
		} else {
			want[1]++
		}
	}
	if want[0] == 0 || want[1] == 0 {
		t.Fatalf("the namespaces do not split (%v); pick other names", want)
	}
	deadline := time.Now().Add(20 * time.Second)
	for i, inf := range infs {
		for !inf.HasSynced() || len(inf.GetStore().List()) != want[i] {
			if time.Now().After(deadline) {
				t.Fatalf("shard %d informer holds %d objects, want %d", i, len(inf.GetStore().List()), want[i])
			}
			time.Sleep(20 * time.Millisecond)
		}
		for _, w := range inf.GetStore().List() {
			if inLow(w.Namespace) != (i == 0) {
				t.Fatalf("shard %d informer holds %s/%s of the other shard", i, w.Namespace, w.Name)
			}
		}
	}
}
