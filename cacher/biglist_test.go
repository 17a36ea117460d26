package cacher_test

import (
	"fmt"
	"path"
	"slices"
	"testing"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
)

// putWidgets writes ns/w-00000 .. ns/w-<n-1> straight into etcd under
// prefix (the store's path prefix), many to a transaction.
func putWidgets(t *testing.T, prefix string, n int) {
	t.Helper()
	var ops []clientv3.Op
	flush := func() {
		if _, err := etcd.Client.Txn(testCtx(t)).Then(ops...).Commit(); err != nil {
			t.Fatal(err)
		}
		ops = ops[:0]
	}
	for i := range n {
		name := fmt.Sprintf("w-%05d", i)
		data, err := runtime.Encode(widget.Codec, widget.NewWidget("ns", name))
		if err != nil {
			t.Fatal(err)
		}
		ops = append(ops, clientv3.OpPut(path.Join("/", prefix, "widgets", "ns", name), string(data)))
		if len(ops) == 128 {
			flush()
		}
	}
	if len(ops) > 0 {
		flush()
	}
}

// A list of every object of a resource large enough to be copied by
// several goroutines holds each object once, in key order, at RV "" and
// "0", also once objects have been deleted and created.
func TestLargeListIsWhole(t *testing.T) {
	prefix := embedtest.Prefix(t)
	store := newStore(t, prefix, false)
	const n = 9000
	putWidgets(t, prefix, n)
	c := startCacher(t, store)
	want := make([]string, 0, n)
	for i := range n {
		want = append(want, fmt.Sprintf("ns/w-%05d", i))
	}
	check := func() {
		t.Helper()
		for _, rv := range []storage.RV{{}, storage.RVAny} {
			got, err := listNames(t, c, "/widgets", rv)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("RV %q: listed %d objects, want %d in key order", rv, len(got), len(want))
			}
		}
	}
	check()
	for i := range 50 {
		name := fmt.Sprintf("w-%05d", i)
		if err := store.Delete(testCtx(t), key("ns", name), &widget.Widget{}, nil, nil, nil, storage.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	create(t, store, "ns", "x-late", nil)
	want = append(want[50:], "ns/x-late")
	check()
}
