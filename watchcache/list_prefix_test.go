package watchcache

import (
	"fmt"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"
)

// prefixFixture holds /widgets/ns1/{a,b,c} and /widgets/ns2/{a,b} at RV 10.
func prefixFixture(t *testing.T) *Cache {
	c, _ := newTestCache(t, nil)
	var objs []runtime.Object
	for _, k := range [][2]string{{"ns1", "a"}, {"ns1", "b"}, {"ns1", "c"}, {"ns2", "a"}, {"ns2", "b"}} {
		objs = append(objs, testWidget(k[0], k[1], 1, nil))
	}
	if err := c.Replace(objs, 10); err != nil {
		t.Fatal(err)
	}
	return c
}

// A recursive list returns exactly the keys under its prefix from its
// start key, whether the prefix covers every key, only the last ones
// (where the walk reads no key), the first ones, or none.
func TestListPrefixBounds(t *testing.T) {
	c := prefixFixture(t)
	cases := []struct {
		prefix, start string
		want          []string
	}{
		{"/widgets/", "", []string{"/widgets/ns1/a", "/widgets/ns1/b", "/widgets/ns1/c", "/widgets/ns2/a", "/widgets/ns2/b"}},
		{"/widgets/", "/widgets/ns1/c", []string{"/widgets/ns1/c", "/widgets/ns2/a", "/widgets/ns2/b"}},
		{"/widgets/ns2/", "", []string{"/widgets/ns2/a", "/widgets/ns2/b"}},
		{"/widgets/ns2/", "/widgets/ns2/b", []string{"/widgets/ns2/b"}},
		{"/widgets/ns1/", "", []string{"/widgets/ns1/a", "/widgets/ns1/b", "/widgets/ns1/c"}},
		{"/widgets/ns1/", "/widgets/ns1/b\x00", []string{"/widgets/ns1/c"}},
		{"/widgets/ns0/", "", nil},
		{"/widgets/ns3/", "", nil},
		{"/widgets/ns", "", []string{"/widgets/ns1/a", "/widgets/ns1/b", "/widgets/ns1/c", "/widgets/ns2/a", "/widgets/ns2/b"}},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s from %q", tc.prefix, tc.start), func(t *testing.T) {
			res, err := c.List(0, NotOlderThan, ListOptions{Key: tc.prefix, Recursive: true, StartKey: tc.start})
			if err != nil {
				t.Fatal(err)
			}
			if got := keys(res.Items); !slices.Equal(got, tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// A list of every key, or a page of them, gets its items in one
// allocation of the right size rather than by growing a slice.
func TestListSizesItemsOnce(t *testing.T) {
	c, _ := newTestCache(t, nil)
	var objs []runtime.Object
	for i := range 100 {
		objs = append(objs, testWidget("ns", fmt.Sprintf("w%03d", i), 1, nil))
	}
	if err := c.Replace(objs, 10); err != nil {
		t.Fatal(err)
	}
	for _, limit := range []int{0, 10} {
		res, err := c.List(0, NotOlderThan, ListOptions{Key: "/widgets/", Recursive: true, Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		want := 100
		if limit > 0 {
			want = limit
		}
		if len(res.Items) != want || cap(res.Items) != want {
			t.Fatalf("limit %d: %d items with capacity %d, want %d and %d", limit, len(res.Items), cap(res.Items), want, want)
		}
	}
}
