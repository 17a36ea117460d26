package reflector

import (
	"errors"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/listwatch/listwatch/examples/widget"
)

func testWidget(ns, name, rv string, lbls map[string]string) *widget.Widget {
	w := widget.NewWidget(ns, name).WithLabels(lbls)
	w.ResourceVersion = rv
	return w
}

func sorted(s []string) []string { sort.Strings(s); return s }

func names(ws []*widget.Widget) []string {
	out := make([]string, 0, len(ws))
	for _, w := range ws {
		out = append(out, w.Namespace+"/"+w.Name)
	}
	return sorted(out)
}

// byLabelValues indexes a widget under every value of its "colors" label,
// split on ".", to exercise several values per object.
func byColors(w *widget.Widget) ([]string, error) {
	c := w.Labels["colors"]
	if c == "" {
		return nil, nil
	}
	return strings.Split(c, "."), nil
}

func TestMetaNamespaceKeyFunc(t *testing.T) {
	cases := []struct {
		name    string
		obj     *widget.Widget
		want    string
		wantErr bool
	}{
		{"namespaced", widget.NewWidget("ns", "a"), "ns/a", false},
		{"cluster-scoped", widget.NewWidget("", "a"), "a", false},
		{"no name", widget.NewWidget("ns", ""), "", true},
		{"nil", nil, "", true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := MetaNamespaceKeyFunc(tc.obj)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Fatalf("got %q, %v; want %q, err=%v", got, err, tc.want, tc.wantErr)
			}
			if err == nil {
				ns, n, err := SplitMetaNamespaceKey(got)
				if err != nil || ns != tc.obj.Namespace || n != tc.obj.Name {
					t.Fatalf("split %q = %q %q %v", got, ns, n, err)
				}
			}
		})
	}
	for _, bad := range []string{"", "a/b/c", "ns/"} {
		if _, _, err := SplitMetaNamespaceKey(bad); err == nil {
			t.Errorf("SplitMetaNamespaceKey(%q) did not fail", bad)
		}
	}
}

func TestIndexerIndexesAndUpdates(t *testing.T) {
	ix := NewIndexer(nil, Indexers[*widget.Widget]{"colors": byColors})
	must(t, ix.Add(testWidget("a", "w1", "1", map[string]string{"colors": "red.blue"})))
	must(t, ix.Add(testWidget("a", "w2", "1", map[string]string{"colors": "blue"})))
	must(t, ix.Add(testWidget("b", "w3", "1", map[string]string{"colors": "green"})))

	got, err := ix.ByIndex("colors", "blue")
	must(t, err)
	if want := []string{"a/w1", "a/w2"}; !slices.Equal(names(got), want) {
		t.Fatalf("ByIndex(blue) = %v, want %v", names(got), want)
	}
	keys, err := ix.IndexKeys(NamespaceIndex, "a")
	must(t, err)
	if want := []string{"a/w1", "a/w2"}; !slices.Equal(sorted(keys), want) {
		t.Fatalf("namespace index a = %v", keys)
	}
	if vals := sorted(ix.ListIndexFuncValues("colors")); !slices.Equal(vals, []string{"blue", "green", "red"}) {
		t.Fatalf("values = %v", vals)
	}
	sameAsW1, err := ix.Index("colors", testWidget("x", "probe", "", map[string]string{"colors": "red.blue"}))
	must(t, err)
	if want := []string{"a/w1", "a/w2"}; !slices.Equal(names(sameAsW1), want) {
		t.Fatalf("Index = %v, want %v (no duplicates)", names(sameAsW1), want)
	}

	// An update moves w1 out of "blue" and "red"; the empty "red" value disappears.
	must(t, ix.Update(testWidget("a", "w1", "2", map[string]string{"colors": "green"})))
	got, _ = ix.ByIndex("colors", "blue")
	if want := []string{"a/w2"}; !slices.Equal(names(got), want) {
		t.Fatalf("after update ByIndex(blue) = %v", names(got))
	}
	if vals := sorted(ix.ListIndexFuncValues("colors")); !slices.Equal(vals, []string{"blue", "green"}) {
		t.Fatalf("values after update = %v", vals)
	}
	must(t, ix.Delete(testWidget("b", "w3", "", nil)))
	got, _ = ix.ByIndex("colors", "green")
	if want := []string{"a/w1"}; !slices.Equal(names(got), want) {
		t.Fatalf("after delete ByIndex(green) = %v", names(got))
	}
	if _, ok := ix.GetByKey("b/w3"); ok {
		t.Fatal("deleted key still present")
	}
	if _, err := ix.ByIndex("nope", "x"); !errors.Is(err, ErrIndexNotFound) {
		t.Fatalf("unknown index error = %v", err)
	}
}

func TestIndexerAddIndexersAfterStart(t *testing.T) {
	ix := NewIndexer[*widget.Widget](nil, nil)
	must(t, ix.Add(testWidget("a", "w1", "1", map[string]string{"colors": "red"})))
	must(t, ix.Add(testWidget("a", "w2", "1", map[string]string{"colors": "red.blue"})))
	must(t, ix.AddIndexers(Indexers[*widget.Widget]{"colors": byColors}))
	got, err := ix.ByIndex("colors", "red")
	must(t, err)
	if want := []string{"a/w1", "a/w2"}; !slices.Equal(names(got), want) {
		t.Fatalf("existing items not indexed: %v", names(got))
	}
	if err := ix.AddIndexers(Indexers[*widget.Widget]{NamespaceIndex: byColors}); !errors.Is(err, ErrIndexExists) {
		t.Fatalf("duplicate index error = %v", err)
	}
	failing := func(*widget.Widget) ([]string, error) { return nil, errors.New("boom") }
	if err := ix.AddIndexers(Indexers[*widget.Widget]{"bad": failing}); err == nil {
		t.Fatal("a failing index func was accepted")
	}
	if _, ok := ix.GetIndexers()["bad"]; ok {
		t.Fatal("failed AddIndexers left the index behind")
	}
}

func TestIndexerReplaceRebuildsIndexes(t *testing.T) {
	ix := NewIndexer(nil, Indexers[*widget.Widget]{"colors": byColors})
	must(t, ix.Add(testWidget("a", "old", "1", map[string]string{"colors": "red"})))
	must(t, ix.Replace([]*widget.Widget{testWidget("b", "new", "2", map[string]string{"colors": "blue"})}, "2"))
	if keys := ix.ListKeys(); !slices.Equal(keys, []string{"b/new"}) {
		t.Fatalf("keys after replace = %v", keys)
	}
	if got, _ := ix.ByIndex("colors", "red"); len(got) != 0 {
		t.Fatalf("stale index entry: %v", names(got))
	}
	if got, _ := ix.ByIndex(NamespaceIndex, "b"); len(got) != 1 {
		t.Fatalf("namespace index not rebuilt: %v", names(got))
	}
	if err := ix.Add(nil); !errors.Is(err, ErrNilObject) {
		t.Fatalf("Add(nil) = %v", err)
	}
}

func TestIndexerConcurrentUse(t *testing.T) {
	ix := NewIndexer(nil, Indexers[*widget.Widget]{"colors": byColors})
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Go(func() {
			for i := 0; i < 200; i++ {
				w := testWidget("ns", "w"+string(rune('a'+g)), "1", map[string]string{"colors": "red"})
				_ = ix.Add(w)
				_, _ = ix.ByIndex("colors", "red")
				_ = ix.List()
				if i%3 == 0 {
					_ = ix.Delete(w)
				}
			}
		})
	}
	wg.Wait()
	for _, w := range ix.List() {
		if got, _ := ix.ByIndex("colors", "red"); !slices.Contains(names(got), "ns/"+w.Name) {
			t.Fatalf("%s stored but not indexed", w.Name)
		}
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
