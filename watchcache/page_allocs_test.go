package watchcache

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
)

// A page is collected into one allocation when the limit, or for an
// unlimited list unlimitedPageStart, holds it, instead of a slice grown
// by doubling as the items arrive.
func TestPageAllocatesItsItemsOnce(t *testing.T) {
	c, _ := newTestCache(t, nil)
	var objs []runtime.Object
	for ns := range 20 {
		for i := range 100 {
			objs = append(objs, testWidget(fmt.Sprintf("ns%02d", ns), fmt.Sprintf("w%03d", i), 1, nil))
		}
	}
	if err := c.Replace(objs, 10); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		q    ListOptions
		want int
	}{
		{"namespace", ListOptions{Key: "/widgets/ns07/", Recursive: true}, 100},
		{"limited", ListOptions{Key: "/widgets/", Recursive: true, Limit: 1000}, 1000},
	} {
		var res ListResult
		allocs := testing.AllocsPerRun(20, func() {
			var err error
			res, err = c.List(10, NotOlderThan, tc.q)
			if err != nil {
				t.Fatal(err)
			}
		})
		if len(res.Items) != tc.want {
			t.Fatalf("%s: %d items, want %d", tc.name, len(res.Items), tc.want)
		}
		// The items, and the closures of the scan.
		if allocs > 3 {
			t.Errorf("%s: %.0f allocations per list of %d items, want at most 3", tc.name, allocs, tc.want)
		}
	}
}
