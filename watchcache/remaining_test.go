package watchcache

import (
	"fmt"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
)

// TestRemainingCountsPerPage walks two prefixes page by page, with writes
// between pages, and checks every page's Remaining against a full count of
// the same snapshot: the memo of one page must give the next page's count.
func TestRemainingCountsPerPage(t *testing.T) {
	c, _ := newTestCache(t, nil)
	var objs []runtime.Object
	for i := range 23 {
		objs = append(objs, testWidget("a", fmt.Sprintf("w%02d", i), 1, nil), testWidget("b", fmt.Sprintf("w%02d", i), 1, nil))
	}
	objs = append(objs, testWidget("c", "x", 1, nil))
	if err := c.Replace(objs, 10); err != nil {
		t.Fatal(err)
	}
	rv := uint64(10)
	for _, prefix := range []string{"/widgets/", "/widgets/a/", "/widgets/b/"} {
		for _, limit := range []int{1, 5, 23, 46} {
			q := ListOptions{Key: prefix, Recursive: true, Limit: limit, CountRemaining: true}
			res, err := c.List(0, NotOlderThan, q)
			if err != nil {
				t.Fatal(err)
			}
			at := res.RV
			seen := len(res.Items)
			for pages := 1; ; pages++ {
				full, err := c.List(at, Exact, ListOptions{Key: prefix, Recursive: true, StartKey: q.StartKey})
				if err != nil {
					t.Fatal(err)
				}
				if want := int64(len(full.Items) - len(res.Items)); res.Remaining != want {
					t.Fatalf("%s limit %d page %d: remaining %d, want %d", prefix, limit, pages, res.Remaining, want)
				}
				if res.More != (res.Remaining > 0) {
					t.Fatalf("%s limit %d page %d: more %v with %d remaining", prefix, limit, pages, res.More, res.Remaining)
				}
				if !res.More {
					break
				}
				rv++ // a write between pages must not change the snapshot's counts
				mustApply(t, c, "add", testWidget("a", fmt.Sprintf("new%03d", rv), rv, nil), rv)
				q.StartKey = res.NextKey
				if res, err = c.List(at, Exact, q); err != nil {
					t.Fatal(err)
				}
				seen += len(res.Items)
			}
			full, _ := c.List(at, Exact, ListOptions{Key: prefix, Recursive: true})
			if seen != len(full.Items) {
				t.Fatalf("%s limit %d: paged %d items, the snapshot has %d", prefix, limit, seen, len(full.Items))
			}
		}
	}
}

func BenchmarkPagedWalk(b *testing.B) {
	for _, n := range []int{10_000, 50_000} {
		c := loaded(b, n)
		b.Run(fmt.Sprintf("n=%d/limit=500", n), func(b *testing.B) {
			b.ReportAllocs()
			pages := 0
			for b.Loop() {
				q := ListOptions{Key: "/widgets/", Recursive: true, Limit: 500, CountRemaining: true}
				res, err := c.List(0, NotOlderThan, q)
				pages = 1
				for ; err == nil && res.More; pages++ {
					q.StartKey = res.NextKey
					res, err = c.List(res.RV, Exact, q)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(pages), "pages")
		})
	}
}
