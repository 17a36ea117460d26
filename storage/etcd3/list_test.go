package etcd3

import (
	"errors"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
)

func names(l *widget.WidgetList) []string {
	out := make([]string, 0, len(l.Items))
	for _, w := range l.Items {
		out = append(out, w.Name)
	}
	return out
}

func TestListRecursivePrefixIsolation(t *testing.T) {
	s := newTestStore(t)
	ctx := testCtx(t)
	mustCreate(t, s, "/widgets/a/x", widget.NewWidget("a", "x"))
	mustCreate(t, s, "/widgets/ab/y", widget.NewWidget("ab", "y"))
	l := &widget.WidgetList{}
	if err := s.GetList(ctx, "/widgets/a", storage.ListOptions{Recursive: true, Predicate: storage.Everything}, l); err != nil {
		t.Fatal(err)
	}
	if got := names(l); len(got) != 1 || got[0] != "x" {
		t.Fatalf("recursive /widgets/a returned %v", got)
	}
	// Non-recursive: exactly one key.
	l = &widget.WidgetList{}
	if err := s.GetList(ctx, "/widgets/a/x", storage.ListOptions{Predicate: storage.Everything}, l); err != nil {
		t.Fatal(err)
	}
	if got := names(l); len(got) != 1 || got[0] != "x" {
		t.Fatalf("non-recursive returned %v", got)
	}
	l = &widget.WidgetList{}
	if err := s.GetList(ctx, "/widgets/a", storage.ListOptions{Predicate: storage.Everything}, l); err != nil {
		t.Fatal(err)
	}
	if len(l.Items) != 0 || l.Items == nil {
		t.Fatalf("non-recursive on a directory returned %v (nil items: %v)", names(l), l.Items == nil)
	}
}

// TestListPaginationFillsPages checks that a filtering predicate does not
// produce short pages: each page holds `limit` matches while more exist.
func TestListPaginationFillsPages(t *testing.T) {
	s := newTestStore(t, func(c *Config) { c.MaxListBatch = 8 })
	ctx := testCtx(t)
	for i := 0; i < 40; i++ {
		app := "other"
		if i%7 == 0 {
			app = "rare"
		}
		mustCreate(t, s, fmt.Sprintf("/widgets/ns/w%02d", i), testWidget(fmt.Sprintf("w%02d", i), map[string]string{"app": app}))
	}
	pred := storage.SelectionPredicate{Label: labels.SelectorFromSet(labels.Set{"app": "rare"}), Limit: 2}
	var all []string
	var listRV string
	pages := 0
	for {
		l := &widget.WidgetList{}
		if err := s.GetList(ctx, "/widgets", storage.ListOptions{Recursive: true, Predicate: pred}, l); err != nil {
			t.Fatal(err)
		}
		pages++
		if listRV == "" {
			listRV = l.ResourceVersion
		} else if l.ResourceVersion != listRV {
			t.Fatalf("page RV %s differs from first page %s", l.ResourceVersion, listRV)
		}
		if l.Continue != "" && len(l.Items) != 2 {
			t.Fatalf("page %d has %d items but a continue token", pages, len(l.Items))
		}
		if l.RemainingItemCount != nil {
			t.Fatal("remainingItemCount set for a filtering predicate")
		}
		all = append(all, names(l)...)
		if l.Continue == "" {
			break
		}
		pred.Continue = l.Continue
	}
	want := []string{"w00", "w07", "w14", "w21", "w28", "w35"}
	if fmt.Sprint(all) != fmt.Sprint(want) {
		t.Fatalf("got %v, want %v", all, want)
	}
	// Three full pages, plus possibly an empty one: the store cannot know
	// that the keys after w35 do not match without reading them.
	if pages < 3 || pages > 4 {
		t.Fatalf("%d pages, want 3 or 4", pages)
	}
}

func TestListContinueAcrossWritesAndRemaining(t *testing.T) {
	s := newTestStore(t)
	ctx := testCtx(t)
	for i := 0; i < 5; i++ {
		mustCreate(t, s, fmt.Sprintf("/widgets/ns/w%d", i), testWidget(fmt.Sprintf("w%d", i), nil))
	}
	l := &widget.WidgetList{}
	opts := storage.ListOptions{Recursive: true, Predicate: storage.SelectionPredicate{Limit: 2}}
	if err := s.GetList(ctx, "/widgets", opts, l); err != nil {
		t.Fatal(err)
	}
	if l.RemainingItemCount == nil || *l.RemainingItemCount != 3 || l.Continue == "" {
		t.Fatalf("first page: remaining %v continue %q", l.RemainingItemCount, l.Continue)
	}
	// Writes after the first page are invisible to later pages.
	mustCreate(t, s, "/widgets/ns/w9", testWidget("w9", nil))
	if err := s.Delete(ctx, "/widgets/ns/w3", &widget.Widget{}, nil, nil, nil, storage.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	opts.Predicate.Limit = 10
	opts.Predicate.Continue = l.Continue
	l2 := &widget.WidgetList{}
	if err := s.GetList(ctx, "/widgets", opts, l2); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(names(l2)); got != "[w2 w3 w4]" || l2.ResourceVersion != l.ResourceVersion || l2.Continue != "" {
		t.Fatalf("second page %s at RV %s (first %s), continue %q", got, l2.ResourceVersion, l.ResourceVersion, l2.Continue)
	}
	// Continue plus an RV is invalid.
	opts.ResourceVersion = mustRV(t, l.ResourceVersion)
	if err := s.GetList(ctx, "/widgets", opts, &widget.WidgetList{}); !errors.Is(err, storage.ErrInvalidArgument) {
		t.Fatalf("continue with RV: %v", err)
	}
}

func TestListExactAndCompacted(t *testing.T) {
	s := newTestStore(t)
	ctx := testCtx(t)
	first := mustCreate(t, s, "/widgets/ns/a", testWidget("a", nil))
	mustCreate(t, s, "/widgets/ns/b", testWidget("b", nil))
	rv := rvOf(t, first)
	l := &widget.WidgetList{}
	exact := storage.ListOptions{Recursive: true, ResourceVersion: rvAt(rv), ResourceVersionMatch: metav1.ResourceVersionMatchExact, Predicate: storage.Everything}
	if err := s.GetList(ctx, "/widgets", exact, l); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(names(l)) != "[a]" || l.ResourceVersion != itoa(rv) {
		t.Fatalf("exact list: %v at %s", names(l), l.ResourceVersion)
	}
	// A continue token pinned before a compaction is 410 with a fresh token.
	page := &widget.WidgetList{}
	if err := s.GetList(ctx, "/widgets", storage.ListOptions{Recursive: true, Predicate: storage.SelectionPredicate{Limit: 1}}, page); err != nil {
		t.Fatal(err)
	}
	mustCreate(t, s, "/widgets/ns/c", testWidget("c", nil))
	if err := etcdServer.Compact(ctx, currentRev(t)); err != nil {
		t.Fatal(err)
	}
	err := s.GetList(ctx, "/widgets", exact, &widget.WidgetList{})
	if !errors.Is(err, storage.ErrGone) {
		t.Fatalf("exact list after compaction: %v", err)
	}
	next := &widget.WidgetList{}
	err = s.GetList(ctx, "/widgets", storage.ListOptions{Recursive: true, Predicate: storage.SelectionPredicate{Limit: 5, Continue: page.Continue}}, next)
	var se *storage.Error
	if !errors.As(err, &se) || se.Code != storage.CodeGone || se.Continue == "" {
		t.Fatalf("compacted continue: %v", err)
	}
	if st := se.Status(); st.Code != 410 || st.ListMeta.Continue != se.Continue {
		t.Fatalf("status %+v", st)
	}
	// The fresh token continues at the latest state.
	if err := s.GetList(ctx, "/widgets", storage.ListOptions{Recursive: true, Predicate: storage.SelectionPredicate{Limit: 5, Continue: se.Continue}}, next); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(names(next)) != "[b c]" {
		t.Fatalf("inconsistent continuation returned %v", names(next))
	}
	// NotOlderThan a future RV is too large.
	err = s.GetList(ctx, "/widgets", storage.ListOptions{Recursive: true, ResourceVersion: rvAt(currentRev(t) + 1000), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, Predicate: storage.Everything}, &widget.WidgetList{})
	if !errors.Is(err, storage.ErrTooLargeResourceVersion) {
		t.Fatalf("future NotOlderThan: %v", err)
	}
}
