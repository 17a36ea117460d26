package storagetest

import (
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/storage"
)

var pagingCases = []Case{
	{"ListPagination", testListPagination},
	{"ListLimitAboveItemCount", testListLimitAbove},
	{"ListContinueAcrossWrites", testListContinueAcrossWrites},
	{"ListPagingAtExactResourceVersion", testListPagingExact},
	{"ListContinueInvalidToken", testListContinueInvalid},
	{"ListContinueWithResourceVersion", testListContinueWithRV},
	{"ListContinueAfterCompaction", testListContinueCompacted},
	{"ListContinueAfterCompactionFreshToken", testListContinueCompactedHint},
	{"ListFilterWithLimitFillsPages", testListFilterWithLimit},
	{"ListRareMatchFillsPage", testListRareMatch},
	{"ListRemainingItemCountNotSetWithFilter", testListRemainingWithFilter},
}

// page lists one page of key with opts, limit and token.
func (e *Env) page(t *testing.T, key string, opts storage.ListOptions, limit int64, token string) runtime.Object {
	t.Helper()
	opts.Predicate.Limit = limit
	opts.Predicate.Continue = token
	if token != "" {
		opts.ResourceVersion, opts.ResourceVersionMatch = storage.RV{}, ""
	}
	return e.mustList(t, key, opts)
}

func createN(t *testing.T, e *Env, ns string, n int, lbl func(i int) map[string]string) {
	t.Helper()
	for i := range n {
		var l map[string]string
		if lbl != nil {
			l = lbl(i)
		}
		e.mustCreate(t, ns, fmt.Sprintf("o%02d", i), l)
	}
}

func testListPagination(t *testing.T, e *Env) {
	createN(t, e, "ns", 5, nil)
	want := [][]string{{"ns/o00", "ns/o01"}, {"ns/o02", "ns/o03"}, {"ns/o04"}}
	wantRemaining := []int64{3, 1, 0}
	token, rv := "", int64(0)
	for i, w := range want {
		list := e.page(t, e.ResourcePrefix, everything, 2, token)
		checkNames(t, list, w...)
		if i == 0 {
			rv = listRV(t, list)
		} else if listRV(t, list) != rv {
			t.Fatalf("page %d at RV %d, the first page at %d: pages must share one RV", i, listRV(t, list), rv)
		}
		var remaining *int64
		token, remaining = listMeta(t, list)
		last := i == len(want)-1
		if last != (token == "") {
			t.Fatalf("page %d continue token %q; want one on every page but the last", i, token)
		}
		got := int64(0)
		if remaining != nil {
			got = *remaining
		}
		if got != wantRemaining[i] || (!last && remaining == nil) {
			t.Fatalf("page %d remainingItemCount %v, want %d", i, remaining, wantRemaining[i])
		}
	}
}

func testListLimitAbove(t *testing.T, e *Env) {
	createN(t, e, "ns", 3, nil)
	list := e.page(t, e.ResourcePrefix, everything, 10, "")
	checkNames(t, list, "ns/o00", "ns/o01", "ns/o02")
	if token, remaining := listMeta(t, list); token != "" || (remaining != nil && *remaining != 0) {
		t.Fatalf("complete list has continue %q remainingItemCount %v", token, remaining)
	}
}

func testListContinueAcrossWrites(t *testing.T, e *Env) {
	createN(t, e, "ns", 4, nil)
	first := e.page(t, e.ResourcePrefix, everything, 2, "")
	checkNames(t, first, "ns/o00", "ns/o01")
	d := e.mustGet(t, e.key("ns", "o03"))
	token, _ := listMeta(t, first)

	e.mustDelete(t, e.key("ns", "o02"))
	e.mustBump(t, e.key("ns", "o03"))
	e.mustCreate(t, "ns", "o04", nil)
	e.mustCreate(t, "ns", "o00a", nil) // sorts before the continue point

	second := e.page(t, e.ResourcePrefix, everything, 2, token)
	checkNames(t, second, "ns/o02", "ns/o03")
	if listRV(t, second) != listRV(t, first) {
		t.Fatalf("second page at RV %d, first at %d", listRV(t, second), listRV(t, first))
	}
	if got := items(t, second)[1]; rvOf(t, got) != rvOf(t, d) || replicas(t, got) != 0 {
		t.Fatalf("o03 on the second page is %s, want its state when the list started %s", describe(got), describe(d))
	}
	if token, _ := listMeta(t, second); token != "" {
		t.Fatalf("second page has continue token %q; at the pinned RV nothing is left", token)
	}
}

func testListPagingExact(t *testing.T, e *Env) {
	createN(t, e, "ns", 3, nil)
	at := rvOf(t, e.mustGet(t, e.key("ns", "o02")))
	e.mustCreate(t, "ns", "o03", nil)
	e.mustBump(t, e.key("ns", "o01"))

	first := e.page(t, e.ResourcePrefix, exactOpts(at), 2, "")
	checkNames(t, first, "ns/o00", "ns/o01")
	if listRV(t, first) != at {
		t.Fatalf("first page at RV %d, want %d", listRV(t, first), at)
	}
	if replicas(t, items(t, first)[1]) != 0 {
		t.Fatalf("o01 in an Exact list at %d shows a later update", at)
	}
	token, _ := listMeta(t, first)
	if token == "" {
		t.Fatal("first page has no continue token")
	}
	second := e.page(t, e.ResourcePrefix, everything, 2, token)
	checkNames(t, second, "ns/o02")
	if listRV(t, second) != at {
		t.Fatalf("second page at RV %d, want %d", listRV(t, second), at)
	}
}

func testListContinueInvalid(t *testing.T, e *Env) {
	createN(t, e, "ns", 2, nil)
	tokens := []string{
		"not-a-token!",
		base64.RawURLEncoding.EncodeToString([]byte("{garbage")),
		base64.RawURLEncoding.EncodeToString([]byte(`{"v":"meta.k8s.io/v1","rv":0,"start":"ns/o01"}`)),
		base64.RawURLEncoding.EncodeToString([]byte(`{"v":"meta.k8s.io/v1","rv":5,"start":"../../etc"}`)),
	}
	for _, tok := range tokens {
		opts := everything
		opts.Predicate.Limit = 1
		opts.Predicate.Continue = tok
		err := e.Store.GetList(ctx(t), e.ResourcePrefix, opts, e.emptyList())
		expectCode(t, fmt.Sprintf("list with continue %q", tok), err, storage.ErrInvalidArgument)
		if !apierrors.IsBadRequest(err) {
			t.Fatalf("apierrors.IsBadRequest(%v) is false", err)
		}
	}
}

func testListContinueWithRV(t *testing.T, e *Env) {
	createN(t, e, "ns", 3, nil)
	first := e.page(t, e.ResourcePrefix, everything, 1, "")
	token, _ := listMeta(t, first)
	opts := everything
	opts.Predicate.Limit = 1
	opts.Predicate.Continue = token
	opts.ResourceVersion = rvAt(listRV(t, first))
	err := e.Store.GetList(ctx(t), e.ResourcePrefix, opts, e.emptyList())
	expectCode(t, "list with both continue and resourceVersion", err, storage.ErrInvalidArgument)
}

func testListContinueCompacted(t *testing.T, e *Env) {
	createN(t, e, "ns", 3, nil)
	first := e.page(t, e.ResourcePrefix, everything, 1, "")
	token, _ := listMeta(t, first)
	e.mustBump(t, e.key("ns", "o01"))
	e.compact(t)
	opts := everything
	opts.Predicate.Limit = 1
	opts.Predicate.Continue = token
	err := e.Store.GetList(ctx(t), e.ResourcePrefix, opts, e.emptyList())
	expectCode(t, "continue after compaction", err, storage.ErrGone)
	if !apierrors.IsResourceExpired(err) {
		t.Fatalf("apierrors.IsResourceExpired(%v) is false", err)
	}
}

// pagesOf lists every page of key with opts and limit, failing when a page
// other than the last is not full.
func pagesOf(t *testing.T, e *Env, opts storage.ListOptions, limit int64) [][]string {
	t.Helper()
	var pages [][]string
	token := ""
	for range 100 {
		list := e.page(t, e.ResourcePrefix, opts, limit, token)
		got := names(t, items(t, list))
		if int64(len(got)) > limit {
			t.Fatalf("page of %d items exceeds limit %d", len(got), limit)
		}
		pages = append(pages, got)
		token, _ = listMeta(t, list)
		if token == "" {
			return pages
		}
		if int64(len(got)) != limit {
			t.Fatalf("page %d holds %d items but has a continue token; pages must be filled to limit %d", len(pages), len(got), limit)
		}
	}
	t.Fatal("more than 100 pages")
	return nil
}

func testListFilterWithLimit(t *testing.T, e *Env) {
	match := []int{1, 4, 5, 8}
	createN(t, e, "ns", 10, func(i int) map[string]string {
		if slices.Contains(match, i) {
			return map[string]string{"pick": "yes"}
		}
		return map[string]string{"pick": "no"}
	})
	pages := pagesOf(t, e, selectorOpts(t, "pick=yes", ""), 2)
	if len(pages) < 2 || !slices.Equal(pages[0], []string{"ns/o01", "ns/o04"}) || !slices.Equal(pages[1], []string{"ns/o05", "ns/o08"}) {
		t.Fatalf("pages %v, want [o01 o04] [o05 o08] (and possibly one empty last page)", pages)
	}
	if len(pages) == 3 && len(pages[2]) != 0 || len(pages) > 3 {
		t.Fatalf("pages %v: nothing may follow the last match", pages)
	}
}

func testListRareMatch(t *testing.T, e *Env) {
	createN(t, e, "ns", 30, func(i int) map[string]string {
		if i == 27 {
			return map[string]string{"rare": "yes"}
		}
		return nil
	})
	list := e.page(t, e.ResourcePrefix, selectorOpts(t, "rare=yes", ""), 1, "")
	checkNames(t, list, "ns/o27")
}

func testListRemainingWithFilter(t *testing.T, e *Env) {
	createN(t, e, "ns", 6, func(i int) map[string]string { return map[string]string{"even": fmt.Sprint(i%2 == 0)} })
	list := e.page(t, e.ResourcePrefix, selectorOpts(t, "even=true", ""), 1, "")
	checkNames(t, list, "ns/o00")
	token, remaining := listMeta(t, list)
	if token == "" {
		t.Fatal("no continue token although two more items match")
	}
	if remaining != nil {
		t.Fatalf("remainingItemCount %d set on a filtered list; it cannot be known without evaluating the filter", *remaining)
	}
	unfiltered := e.page(t, e.ResourcePrefix, everything, 1, "")
	if _, r := listMeta(t, unfiltered); r == nil || *r != 5 {
		t.Fatalf("unfiltered first page remainingItemCount %v, want 5", r)
	}
}

func testListContinueCompactedHint(t *testing.T, e *Env) {
	createN(t, e, "ns", 3, nil)
	first := e.page(t, e.ResourcePrefix, everything, 1, "")
	token, _ := listMeta(t, first)
	e.mustBump(t, e.key("ns", "o01"))
	e.mustDelete(t, e.key("ns", "o00"))
	e.compact(t)
	opts := everything
	opts.Predicate.Limit = 1
	opts.Predicate.Continue = token
	err := e.Store.GetList(ctx(t), e.ResourcePrefix, opts, e.emptyList())
	var se *storage.Error
	if !errors.As(err, &se) || se.Code != storage.CodeGone || se.Continue == "" {
		t.Fatalf("continue after compaction returned %v; want a *storage.Error 410 carrying a fresh Continue token", err)
	}
	if st := se.Status(); st.ListMeta.Continue != se.Continue {
		t.Fatalf("Status() carries continue %q, the error %q", st.ListMeta.Continue, se.Continue)
	}
	// The fresh token resumes after the last key served, at the latest state.
	next := e.page(t, e.ResourcePrefix, everything, 1, se.Continue)
	checkNames(t, next, "ns/o01")
	if replicas(t, items(t, next)[0]) != 1 {
		t.Fatalf("page from the fresh token shows %s without the update made before compaction", describe(items(t, next)[0]))
	}
	if listRV(t, next) <= listRV(t, first) {
		t.Fatalf("page from the fresh token at RV %d, not newer than the compacted list's %d", listRV(t, next), listRV(t, first))
	}
}
