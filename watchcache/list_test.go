package watchcache

import (
	"errors"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
)

// listFixture: at RV 10 ns1/{a,b,c} and ns2/{a}; RV 11 adds ns1/d; RV 12
// deletes ns1/a; RV 13 relabels ns2/a.
func listFixture(t *testing.T) *Cache {
	c, _ := newTestCache(t, nil)
	objs := []runtime.Object{
		testWidget("ns1", "a", 1, map[string]string{"app": "x"}),
		testWidget("ns1", "b", 2, map[string]string{"app": "y"}),
		testWidget("ns1", "c", 3, map[string]string{"app": "x"}),
		testWidget("ns2", "a", 4, map[string]string{"app": "x"}),
	}
	if err := c.Replace(objs, 10); err != nil {
		t.Fatal(err)
	}
	mustApply(t, c, "add", testWidget("ns1", "d", 11, map[string]string{"app": "x"}), 11)
	mustApply(t, c, "del", testWidget("ns1", "a", 12, map[string]string{"app": "x"}), 12)
	mustApply(t, c, "mod", testWidget("ns2", "a", 13, map[string]string{"app": "y"}), 13)
	c.UpdateRV(13) // progress: revision 13 is complete
	return c
}

func appIs(v string) func(*Element) bool {
	return func(el *Element) bool { return el.Labels["app"] == v }
}

func TestList(t *testing.T) {
	c := listFixture(t)
	all := ListOptions{Key: "/widgets/", Recursive: true}
	ns1 := ListOptions{Key: "/widgets/ns1/", Recursive: true}
	cases := []struct {
		name     string
		rv       uint64
		match    Match
		opts     ListOptions
		want     []string
		wantRV   uint64
		wantMore bool
		wantErr  error
	}{
		{"current", 0, NotOlderThan, all, []string{"/widgets/ns1/b", "/widgets/ns1/c", "/widgets/ns1/d", "/widgets/ns2/a"}, 13, false, nil},
		{"not older than 12", 12, NotOlderThan, ns1, []string{"/widgets/ns1/b", "/widgets/ns1/c", "/widgets/ns1/d"}, 13, false, nil},
		{"too large", 14, NotOlderThan, all, nil, 0, false, storage.ErrTooLargeResourceVersion},
		{"exact list RV", 10, Exact, ns1, []string{"/widgets/ns1/a", "/widgets/ns1/b", "/widgets/ns1/c"}, 10, false, nil},
		{"exact 11", 11, Exact, ns1, []string{"/widgets/ns1/a", "/widgets/ns1/b", "/widgets/ns1/c", "/widgets/ns1/d"}, 11, false, nil},
		{"exact current", 13, Exact, all, []string{"/widgets/ns1/b", "/widgets/ns1/c", "/widgets/ns1/d", "/widgets/ns2/a"}, 13, false, nil},
		{"exact before list", 9, Exact, all, nil, 0, false, storage.ErrGone},
		{"filter", 0, NotOlderThan, ListOptions{Key: "/widgets/", Recursive: true, Filter: appIs("x")}, []string{"/widgets/ns1/c", "/widgets/ns1/d"}, 13, false, nil},
		{"index", 0, NotOlderThan, ListOptions{Key: "/widgets/", Recursive: true, Index: &IndexValue{Name: LabelIndex("app"), Value: "y"}}, []string{"/widgets/ns1/b", "/widgets/ns2/a"}, 13, false, nil},
		{"index at exact 10", 10, Exact, ListOptions{Key: "/widgets/", Recursive: true, Index: &IndexValue{Name: LabelIndex("app"), Value: "x"}}, []string{"/widgets/ns1/a", "/widgets/ns1/c", "/widgets/ns2/a"}, 10, false, nil},
		{"unknown index falls back to scan", 0, NotOlderThan, ListOptions{Key: "/widgets/ns2/", Recursive: true, Index: &IndexValue{Name: "nope", Value: "y"}}, []string{"/widgets/ns2/a"}, 13, false, nil},
		{"limit", 0, NotOlderThan, ListOptions{Key: "/widgets/", Recursive: true, Limit: 2}, []string{"/widgets/ns1/b", "/widgets/ns1/c"}, 13, true, nil},
		{"start key", 0, NotOlderThan, ListOptions{Key: "/widgets/", Recursive: true, StartKey: "/widgets/ns1/c\x00"}, []string{"/widgets/ns1/d", "/widgets/ns2/a"}, 13, false, nil},
		{"single key", 0, NotOlderThan, ListOptions{Key: "/widgets/ns1/b"}, []string{"/widgets/ns1/b"}, 13, false, nil},
		{"single missing key", 0, NotOlderThan, ListOptions{Key: "/widgets/ns1/a"}, []string{}, 13, false, nil},
		{"prefix is not a key prefix match of a sibling", 0, NotOlderThan, ListOptions{Key: "/widgets/ns", Recursive: true, Limit: 1}, []string{"/widgets/ns1/b"}, 13, true, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := c.List(tc.rv, tc.match, tc.opts)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("want %v, got %v", tc.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := keys(res.Items); !slices.Equal(got, tc.want) || res.RV != tc.wantRV || res.More != tc.wantMore {
				t.Fatalf("got %v rv=%d more=%v, want %v rv=%d more=%v", got, res.RV, res.More, tc.want, tc.wantRV, tc.wantMore)
			}
		})
	}
}

// Every page of a paginated list is read at the first page's RV, even when
// writes land between pages.
func TestPaginationIsConsistent(t *testing.T) {
	c, _ := newTestCache(t, nil)
	var objs []runtime.Object
	for _, n := range names(10) {
		objs = append(objs, testWidget("ns", n, 1, nil))
	}
	_ = c.Replace(objs, 10)
	q := ListOptions{Key: "/widgets/", Recursive: true, Limit: 3, CountRemaining: true}
	first, err := c.List(0, NotOlderThan, q)
	if err != nil || first.Remaining != 7 || first.NextKey != "/widgets/ns/w002\x00" {
		t.Fatalf("first page: %+v %v", first, err)
	}
	got := keys(first.Items)
	rv := uint64(10)
	for res := first; res.More; {
		rv++ // a write between pages: delete the next key, add a new one
		mustApply(t, c, "del", testWidget("ns", "w00"+string(rune('0'+len(got))), rv, nil), rv)
		mustApply(t, c, "add", testWidget("ns", "w5"+string(rune('0'+len(got))), rv, nil), rv)
		q.StartKey = res.NextKey
		res, err = c.List(first.RV, Exact, q)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, keys(res.Items)...)
	}
	if !slices.Equal(got, prefixed("/widgets/ns/", names(10))) {
		t.Fatalf("pages: %v", got)
	}
}

func prefixed(p string, ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = p + s
	}
	return out
}

// Snapshots are bounded: by default the oldest are dropped, and an exact
// RV before the oldest kept is too old.
func TestSnapshotsAreBounded(t *testing.T) {
	c, _ := newTestCache(t, func(c *Config) { c.MaxSnapshots = 3 })
	_ = c.Replace(nil, 10)
	for rv := uint64(11); rv <= 20; rv++ {
		mustApply(t, c, "add", testWidget("ns", "x", rv, nil), rv)
	}
	if s := c.Stats(); s.Snapshots != 3 {
		t.Fatalf("snapshots: %d", s.Snapshots)
	}
	if _, err := c.List(17, Exact, ListOptions{Key: "/widgets/", Recursive: true}); err != nil {
		t.Fatalf("recent exact: %v", err)
	}
	if _, err := c.List(15, Exact, ListOptions{Key: "/widgets/", Recursive: true}); !errors.Is(err, storage.ErrGone) {
		t.Fatalf("exact before the oldest snapshot: %v", err)
	}
}

// Spaced snapshots are bounded; an exact RV between two of them is rebuilt
// from the ring while it holds the events, and is too old once it does not.
func TestSpacedSnapshotsAreBounded(t *testing.T) {
	c, _ := newTestCache(t, func(c *Config) {
		c.MaxSnapshots, c.MinCapacity, c.MaxCapacity, c.SpacedSnapshots = 3, 4, 4, true
	})
	_ = c.Replace(nil, 10)
	for rv := uint64(11); rv <= 20; rv++ {
		mustApply(t, c, "add", testWidget("ns", "x", rv, nil), rv)
	}
	if s := c.Stats(); s.Snapshots != 3 {
		t.Fatalf("snapshots: %d", s.Snapshots)
	}
	if _, err := c.List(17, Exact, ListOptions{Key: "/widgets/", Recursive: true}); err != nil {
		t.Fatalf("recent exact: %v", err)
	}
	if _, err := c.List(12, Exact, ListOptions{Key: "/widgets/", Recursive: true}); !errors.Is(err, storage.ErrGone) {
		t.Fatalf("old exact: %v", err)
	}
}

func TestGet(t *testing.T) {
	c := listFixture(t)
	el, rv, ok, err := c.Get("/widgets/ns2/a")
	if err != nil || !ok || rv != 13 || mustObject(t, el).(*widget.Widget).Labels["app"] != "y" {
		t.Fatalf("get: %v %d %v %v", el, rv, ok, err)
	}
	if _, _, ok, _ := c.Get("/widgets/ns1/a"); ok {
		t.Fatal("deleted key found")
	}
}
