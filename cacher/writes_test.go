package cacher_test

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
)

// A delete through the cacher of an object the cache holds up to date
// starts from the cache's copy: etcd sees the compare-and-swap and no read
// before it. A precondition that fails is still checked against etcd.
func TestDeleteStartsFromCachedObject(t *testing.T) {
	c, reqs := countedCacher(t)
	for _, name := range []string{"a", "b"} {
		rv := create(t, c, "ns", name, nil)
		if err := c.Get(testCtx(t), key("ns", name), storage.GetOptions{ResourceVersion: storage.RVAt(rv)}, &widget.Widget{}); err != nil {
			t.Fatal(err) // the cache holds it now
		}
	}

	before := reqs.gets.Load()
	out := &widget.Widget{}
	if err := c.Delete(testCtx(t), key("ns", "a"), out, nil, nil, nil, storage.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	if n := reqs.gets.Load() - before; n != 0 {
		t.Errorf("delete read the key %d times, want 0 (the cache's copy is current)", n)
	}
	if out.Name != "a" {
		t.Errorf("delete returned %q, want the deleted object a", out.Name)
	}

	before = reqs.gets.Load()
	wrongUID := types.UID("not-b")
	err := c.Delete(testCtx(t), key("ns", "b"), &widget.Widget{}, &storage.Preconditions{UID: &wrongUID}, nil, nil, storage.DeleteOptions{})
	if !storage.IsCode(err, storage.CodeConflict) || !strings.Contains(err.Error(), "Precondition failed") {
		t.Fatalf("delete with a wrong UID: %v, want a precondition conflict", err)
	}
	if n := reqs.gets.Load() - before; n != 1 {
		t.Errorf("a precondition failing on the cache's copy read etcd %d times, want 1 (to confirm it)", n)
	}
	if err := c.Get(testCtx(t), key("ns", "b"), storage.GetOptions{}, &widget.Widget{}); err != nil {
		t.Fatalf("b after a refused delete: %v", err)
	}
}
