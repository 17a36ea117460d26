package storagetest

import (
	"fmt"
	"slices"
	"sort"
	"testing"

	"k8s.io/apimachinery/pkg/sharding"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/storage"
)

var shardCases = []Case{
	{"ShardListAndWatch", testShardListAndWatch},
}

// testShardListAndWatch splits 16 namespaces in two shards by the FNV-1a
// hash of object.metadata.namespace, at the median hash so that both hold
// objects: each shard lists exactly its objects (together all of them, no
// object twice), and a watch of one shard gets the updates of its objects
// only.
func testShardListAndWatch(t *testing.T, e *Env) {
	var nss []string
	for i := range 16 {
		ns := fmt.Sprintf("ns-%02d", i)
		nss = append(nss, ns)
		e.mustCreate(t, ns, "o", nil)
	}
	hashes := make([]string, 0, len(nss))
	for _, ns := range nss {
		hashes = append(hashes, sharding.HashField(ns))
	}
	sort.Strings(hashes)
	mid := "0x" + hashes[len(hashes)/2]
	inLow := func(ns string) bool { return sharding.HexLess("0x"+sharding.HashField(ns), mid) }
	parse := func(expr string) storage.SelectionPredicate {
		sel, err := storage.ParseShardSelector(expr)
		if err != nil {
			t.Fatal(err)
		}
		return storage.SelectionPredicate{Shard: sel}
	}
	low := parse(fmt.Sprintf("shardRange(object.metadata.namespace, '0x0000000000000000', '%s')", mid))
	high := parse(fmt.Sprintf("shardRange(object.metadata.namespace, '%s', '0x10000000000000000')", mid))
	var all []string
	for _, shard := range []struct {
		pred storage.SelectionPredicate
		low  bool
	}{{low, true}, {high, false}} {
		got := names(t, items(t, e.mustList(t, e.ResourcePrefix, storage.ListOptions{Recursive: true, Predicate: shard.pred})))
		if len(got) == 0 {
			t.Fatalf("shard %s is empty", shard.pred.Shard)
		}
		for _, n := range got {
			ns := n[:len(n)-len("/o")]
			if inLow(ns) != shard.low {
				t.Fatalf("shard %s lists %s, whose hash is outside it", shard.pred.Shard, n)
			}
		}
		all = append(all, got...)
	}
	slices.Sort(all)
	if len(all) != len(nss) || len(slices.Compact(slices.Clone(all))) != len(nss) {
		t.Fatalf("the two shards list %v, want each of the %d objects once", all, len(nss))
	}

	opts := allOpts(rvAt(e.etcdRev(t)))
	opts.Predicate = low
	w := e.mustWatch(t, e.ResourcePrefix, opts)
	want := 0
	for _, ns := range nss {
		e.mustBump(t, e.key(ns, "o"))
		if inLow(ns) {
			want++
		}
	}
	for range want {
		ev := w.nextObject()
		if ev.Type != watch.Modified || !inLow(accessor(t, ev.Object).GetNamespace()) {
			t.Fatalf("low shard watch got %s %s", ev.Type, describe(ev.Object))
		}
	}
	w.expectNone()
}
