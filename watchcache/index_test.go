package watchcache

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestIndexesAgreeWithScans applies random adds, relabels, node moves and
// deletes, and after each checks every index list (label and field, with
// prefixes and start keys, at the current and at older RVs) against a full
// scan filtered by the same value.
func TestIndexesAgreeWithScans(t *testing.T) {
	c, _ := newTestCache(t, nil)
	if err := c.Replace(nil, 1); err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(1, 2))
	apps := []string{"a", "b", "c", ""}
	nodes := []string{"n1", "n2", ""}
	check := func(rv uint64) {
		for _, prefix := range []string{"/widgets/", "/widgets/ns1/"} {
			for _, start := range []string{"", "/widgets/ns1/w05", "/widgets/ns2/w10"} {
				for _, iv := range []IndexValue{{LabelIndex("app"), "a"}, {LabelIndex("app"), "c"}, {FieldIndex("spec.nodeName"), "n2"}, {FieldIndex("spec.nodeName"), ""}} {
					d, _ := c.live.def(iv.Name)
					full, err := c.List(rv, Exact, ListOptions{Key: prefix, Recursive: true, StartKey: start})
					if err != nil {
						t.Fatal(err)
					}
					var want []string
					for _, el := range full.Items {
						if v, ok := d.valueOf(el); ok && v == iv.Value {
							want = append(want, el.Key)
						}
					}
					idx := iv
					got, err := c.List(rv, Exact, ListOptions{Key: prefix, Recursive: true, StartKey: start, Index: &idx})
					if err != nil {
						t.Fatal(err)
					}
					if !slices.Equal(keys(got.Items), want) {
						t.Fatalf("rv %d %s=%q prefix %s start %q: index %v, scan %v", rv, iv.Name, iv.Value, prefix, start, keys(got.Items), want)
					}
				}
			}
		}
	}
	for rv := uint64(2); rv < 300; rv++ {
		ns := []string{"ns1", "ns2"}[r.IntN(2)]
		name := fmt.Sprintf("w%02d", r.IntN(20))
		var lbls map[string]string
		if a := apps[r.IntN(len(apps))]; a != "" {
			lbls = map[string]string{"app": a}
		}
		w := testWidget(ns, name, rv, lbls)
		w.Spec.NodeName = nodes[r.IntN(len(nodes))]
		typ := "mod"
		if r.IntN(4) == 0 {
			typ = "del"
		}
		mustApply(t, c, typ, w, rv)
		c.UpdateRV(rv)
		check(rv)
		if rv > 20 && rv%7 == 0 {
			check(rv - uint64(r.IntN(15)))
		}
	}
}
