package storagetest

import (
	"fmt"
	"slices"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
)

var listCases = []Case{
	{"ListRecursive", testListRecursive},
	{"ListNonRecursive", testListNonRecursive},
	{"ListRecursiveSiblingPrefix", testListSiblingPrefix},
	{"ListNamespaceScoped", testListNamespaceScoped},
	{"ListResourceVersionZero", testListRVZero},
	{"ListResourceVersionUnsetSeesLatest", testListRVUnsetLatest},
	{"ListResourceVersionUnsetIsGlobalRevision", testListRVUnsetGlobal},
	{"ListEmptyHasResourceVersion", testListEmptyHasRV},
	{"ListNotOlderThan", testListNotOlderThan},
	{"ListNotOlderThanTooLarge", testListNotOlderThanTooLarge},
	{"ListExactCurrent", testListExactCurrent},
	{"ListExactOlder", testListExactOlder},
	{"ListExactCompacted", testListExactCompacted},
	{"ListExactWithoutResourceVersion", testListExactWithoutRV},
	{"ListLabelSelector", testListLabelSelector},
	{"ListFieldSelectorNodeName", testListFieldNodeName},
	{"ListFieldSelectorName", testListFieldName},
}

// everything is a recursive, unfiltered, latest-state list.
var everything = storage.ListOptions{Recursive: true, Predicate: storage.Everything}

// checkNames fails t unless the list holds exactly want ("ns/name"), in order.
func checkNames(t *testing.T, list runtime.Object, want ...string) {
	t.Helper()
	got := names(t, items(t, list))
	if !slices.Equal(got, want) && !(len(got) == 0 && len(want) == 0) {
		t.Fatalf("list holds %v, want %v", got, want)
	}
}

func testListRecursive(t *testing.T, e *Env) {
	e.mustCreate(t, "ns1", "a", nil)
	b := e.mustCreate(t, "ns1", "b", nil)
	c := e.mustBump(t, e.key("ns1", "a"))
	d := e.mustCreate(t, "ns2", "c", nil)
	list := e.mustList(t, e.ResourcePrefix, everything)
	checkNames(t, list, "ns1/a", "ns1/b", "ns2/c")
	objs := items(t, list)
	for i, want := range []runtime.Object{c, b, d} {
		if rvOf(t, objs[i]) != rvOf(t, want) {
			t.Fatalf("item %d is %s, want resourceVersion of its last write %s", i, describe(objs[i]), describe(want))
		}
	}
	if lrv := listRV(t, list); lrv < rvOf(t, d) {
		t.Fatalf("list resourceVersion %d is older than the last write %d", lrv, rvOf(t, d))
	}
}

func testListNonRecursive(t *testing.T, e *Env) {
	e.mustCreate(t, "ns", "a", nil)
	e.mustCreate(t, "ns", "a2", nil)
	e.mustCreate(t, "ns", "b", nil)
	opts := storage.ListOptions{Predicate: storage.Everything}
	checkNames(t, e.mustList(t, e.key("ns", "a"), opts), "ns/a")
	missing := e.mustList(t, e.key("ns", "zzz"), opts)
	checkNames(t, missing)
	listRV(t, missing)
}

func testListSiblingPrefix(t *testing.T, e *Env) {
	e.mustCreate(t, "a", "x", nil)
	e.mustCreate(t, "ab", "y", nil)
	e.mustCreate(t, "a", "w", nil)
	e.mustCreate(t, "a", "w2", nil)
	checkNames(t, e.mustList(t, e.nsKey("a"), everything), "a/w", "a/w2", "a/x")
	checkNames(t, e.mustList(t, e.nsKey("ab"), everything), "ab/y")
	// A recursive list of an object's own key holds what is below it: nothing.
	checkNames(t, e.mustList(t, e.key("a", "w"), everything))
}

func testListNamespaceScoped(t *testing.T, e *Env) {
	e.mustCreate(t, "ns1", "a", nil)
	e.mustCreate(t, "ns2", "a", nil)
	e.mustCreate(t, "ns1", "b", nil)
	e.mustCreate(t, "ns3", "c", nil)
	checkNames(t, e.mustList(t, e.nsKey("ns1"), everything), "ns1/a", "ns1/b")
	checkNames(t, e.mustList(t, e.nsKey("ns2"), everything), "ns2/a")
	checkNames(t, e.mustList(t, e.nsKey("ns4"), everything))
}

func testListRVZero(t *testing.T, e *Env) {
	e.mustCreate(t, "ns", "a", nil)
	last := e.mustCreate(t, "ns", "b", nil)
	opts := everything
	opts.ResourceVersion = storage.RVAny
	eventually(t, "a list at RV 0 to hold both objects", func() (bool, string) {
		list := e.mustList(t, e.ResourcePrefix, opts)
		got := names(t, items(t, list))
		if len(got) == 2 && listRV(t, list) >= rvOf(t, last) {
			if !slices.Equal(got, []string{"ns/a", "ns/b"}) {
				t.Fatalf("list RV 0 holds %v", got)
			}
			return true, ""
		}
		return false, fmt.Sprintf("holds %v at list RV %d", got, listRV(t, list))
	})
}

func testListRVUnsetLatest(t *testing.T, e *Env) {
	e.mustCreate(t, "ns", "a", nil)
	e.mustCreate(t, "ns", "b", nil)
	upd := e.mustBump(t, e.key("ns", "a"))
	e.mustDelete(t, e.key("ns", "b"))
	c := e.mustCreate(t, "ns", "c", nil)
	list := e.mustList(t, e.ResourcePrefix, everything)
	checkNames(t, list, "ns/a", "ns/c")
	objs := items(t, list)
	if rvOf(t, objs[0]) != rvOf(t, upd) || replicas(t, objs[0]) != 1 {
		t.Fatalf("a is %s replicas %d, want the update %s", describe(objs[0]), replicas(t, objs[0]), describe(upd))
	}
	if listRV(t, list) < rvOf(t, c) {
		t.Fatalf("list RV %d older than the last write %d", listRV(t, list), rvOf(t, c))
	}
}

func testListRVUnsetGlobal(t *testing.T, e *Env) {
	e.mustCreate(t, "ns", "a", nil)
	rev := e.bumpUnrelated(t)
	list := e.mustList(t, e.ResourcePrefix, everything)
	if got := listRV(t, list); got < rev {
		t.Fatalf("consistent list RV %d is older than etcd revision %d written before it", got, rev)
	}
}

func testListEmptyHasRV(t *testing.T, e *Env) {
	rev := e.bumpUnrelated(t)
	list := e.mustList(t, e.ResourcePrefix, everything)
	checkNames(t, list)
	if got := listRV(t, list); got < rev {
		t.Fatalf("empty list RV %d is older than etcd revision %d", got, rev)
	}
}

func testListNotOlderThan(t *testing.T, e *Env) {
	e.mustCreate(t, "ns", "a", nil)
	b := e.mustCreate(t, "ns", "b", nil)
	for _, match := range []metav1.ResourceVersionMatch{metav1.ResourceVersionMatchNotOlderThan, ""} {
		opts := everything
		opts.ResourceVersion = rvAt(rvOf(t, b))
		opts.ResourceVersionMatch = match
		list := e.mustList(t, e.ResourcePrefix, opts)
		checkNames(t, list, "ns/a", "ns/b")
		if listRV(t, list) < rvOf(t, b) {
			t.Fatalf("match %q: list RV %d older than requested %d", match, listRV(t, list), rvOf(t, b))
		}
	}
}

func testListNotOlderThanTooLarge(t *testing.T, e *Env) {
	e.mustCreate(t, "ns", "a", nil)
	opts := everything
	opts.ResourceVersion = rvAt(e.etcdRev(t) + 1000)
	opts.ResourceVersionMatch = metav1.ResourceVersionMatchNotOlderThan
	err := e.Store.GetList(ctx(t), e.ResourcePrefix, opts, e.emptyList())
	expectCode(t, "list NotOlderThan a future RV", err, storage.ErrTooLargeResourceVersion)
	if !apierrors.IsTimeout(err) {
		t.Fatalf("apierrors.IsTimeout(%v) is false", err)
	}
}

func exactOpts(rv int64) storage.ListOptions {
	opts := everything
	opts.ResourceVersion = rvAt(rv)
	opts.ResourceVersionMatch = metav1.ResourceVersionMatchExact
	return opts
}

func testListExactCurrent(t *testing.T, e *Env) {
	e.mustCreate(t, "ns", "a", nil)
	b := e.mustCreate(t, "ns", "b", nil)
	list := e.mustList(t, e.ResourcePrefix, exactOpts(rvOf(t, b)))
	checkNames(t, list, "ns/a", "ns/b")
	if listRV(t, list) != rvOf(t, b) {
		t.Fatalf("Exact list RV %d, want %d", listRV(t, list), rvOf(t, b))
	}
}

func testListExactOlder(t *testing.T, e *Env) {
	a := e.mustCreate(t, "ns", "a", nil)
	b := e.mustCreate(t, "ns", "b", nil)
	e.mustBump(t, e.key("ns", "a"))
	e.mustDelete(t, e.key("ns", "b"))
	e.mustCreate(t, "ns", "c", nil)

	list := e.mustList(t, e.ResourcePrefix, exactOpts(rvOf(t, b)))
	checkNames(t, list, "ns/a", "ns/b")
	objs := items(t, list)
	if rvOf(t, objs[0]) != rvOf(t, a) || replicas(t, objs[0]) != 0 {
		t.Fatalf("Exact at %d: a is %s replicas %d, want its state at creation", rvOf(t, b), describe(objs[0]), replicas(t, objs[0]))
	}
	if listRV(t, list) != rvOf(t, b) {
		t.Fatalf("Exact list RV %d, want %d", listRV(t, list), rvOf(t, b))
	}
	list = e.mustList(t, e.ResourcePrefix, exactOpts(rvOf(t, a)))
	checkNames(t, list, "ns/a")
	if listRV(t, list) != rvOf(t, a) {
		t.Fatalf("Exact list RV %d, want %d", listRV(t, list), rvOf(t, a))
	}
}

func testListExactCompacted(t *testing.T, e *Env) {
	a := e.mustCreate(t, "ns", "a", nil)
	e.mustBump(t, e.key("ns", "a"))
	e.compact(t)
	err := e.Store.GetList(ctx(t), e.ResourcePrefix, exactOpts(rvOf(t, a)), e.emptyList())
	expectCode(t, "Exact list at a compacted RV", err, storage.ErrGone)
	if !apierrors.IsResourceExpired(err) {
		t.Fatalf("apierrors.IsResourceExpired(%v) is false", err)
	}
}

func testListExactWithoutRV(t *testing.T, e *Env) {
	e.mustCreate(t, "ns", "a", nil)
	opts := everything
	opts.ResourceVersionMatch = metav1.ResourceVersionMatchExact
	err := e.Store.GetList(ctx(t), e.ResourcePrefix, opts, e.emptyList())
	expectCode(t, "Exact list without a resourceVersion", err, storage.ErrInvalidArgument)
	if !apierrors.IsBadRequest(err) {
		t.Fatalf("apierrors.IsBadRequest(%v) is false", err)
	}
}

func selectorOpts(t *testing.T, label, field string) storage.ListOptions {
	t.Helper()
	ls, err := labels.Parse(label)
	if err != nil {
		t.Fatal(err)
	}
	fs, err := fields.ParseSelector(field)
	if err != nil {
		t.Fatal(err)
	}
	return storage.ListOptions{Recursive: true, Predicate: storage.SelectionPredicate{
		Label: ls, Field: fs, GetAttrs: widget.GetAttrs,
	}}
}

func testListLabelSelector(t *testing.T, e *Env) {
	e.mustCreate(t, "ns", "a", map[string]string{"app": "x"})
	e.mustCreate(t, "ns", "b", map[string]string{"app": "y"})
	e.mustCreate(t, "ns", "c", map[string]string{"app": "x", "tier": "web"})
	e.mustCreate(t, "ns", "d", nil)
	checkNames(t, e.mustList(t, e.ResourcePrefix, selectorOpts(t, "app=x", "")), "ns/a", "ns/c")
	checkNames(t, e.mustList(t, e.ResourcePrefix, selectorOpts(t, "app in (x,y),tier!=web", "")), "ns/a", "ns/b")
	checkNames(t, e.mustList(t, e.ResourcePrefix, selectorOpts(t, "!app", "")), "ns/d")
}

func testListFieldNodeName(t *testing.T, e *Env) {
	for i, node := range []string{"n1", "n2", "n1", ""} {
		obj := e.newObj("ns", string(rune('a'+i)), nil)
		setNodeName(t, obj, node)
		e.mustCreateObj(t, obj)
	}
	checkNames(t, e.mustList(t, e.ResourcePrefix, selectorOpts(t, "", "spec.nodeName=n1")), "ns/a", "ns/c")
	checkNames(t, e.mustList(t, e.ResourcePrefix, selectorOpts(t, "", "spec.nodeName!=n1")), "ns/b", "ns/d")
}

func testListFieldName(t *testing.T, e *Env) {
	e.mustCreate(t, "ns1", "a", nil)
	e.mustCreate(t, "ns1", "b", nil)
	e.mustCreate(t, "ns2", "b", nil)
	checkNames(t, e.mustList(t, e.ResourcePrefix, selectorOpts(t, "", "metadata.name=b")), "ns1/b", "ns2/b")
	checkNames(t, e.mustList(t, e.ResourcePrefix, selectorOpts(t, "", "metadata.name=b,metadata.namespace=ns2")), "ns2/b")
}
