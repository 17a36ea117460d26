package storagetest

import (
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/listwatch/listwatch/storage"
)

var getCases = []Case{
	{"GetResourceVersionUnsetIsLatest", testGetRVUnset},
	{"GetResourceVersionZero", testGetRVZero},
	{"GetResourceVersionNotOlderThan", testGetRVNotOlderThan},
	{"GetResourceVersionTooLarge", testGetRVTooLarge},
	{"GetNotFound", testGetNotFound},
	{"GetIgnoreNotFoundZeroesObject", testGetIgnoreNotFound},
	{"GetIgnoreNotFoundExisting", testGetIgnoreNotFoundExisting},
}

func testGetRVUnset(t *testing.T, e *Env) {
	e.mustCreate(t, "ns", "a", nil)
	upd := e.mustBump(t, e.key("ns", "a"))
	got := e.mustGet(t, e.key("ns", "a"))
	if rvOf(t, got) != rvOf(t, upd) || replicas(t, got) != 1 {
		t.Fatalf("Get RV \"\" returned %s replicas %d, want the update at %d with replicas 1",
			describe(got), replicas(t, got), rvOf(t, upd))
	}
}

func testGetRVZero(t *testing.T, e *Env) {
	created := e.mustCreate(t, "ns", "a", nil)
	want := rvOf(t, created)
	eventually(t, "Get RV 0 to return the object", func() (bool, string) {
		got := e.empty()
		err := e.Store.Get(ctx(t), e.key("ns", "a"), storage.GetOptions{ResourceVersion: storage.RVAny}, got)
		if err != nil {
			if storage.IsCode(err, storage.CodeNotFound) {
				return false, "not found yet"
			}
			t.Fatalf("Get RV 0: %v", err)
		}
		if rvOf(t, got) != want {
			t.Fatalf("Get RV 0 returned %s, want resourceVersion %d (the only write)", describe(got), want)
		}
		return true, ""
	})
}

func testGetRVNotOlderThan(t *testing.T, e *Env) {
	first := e.mustCreate(t, "ns", "a", nil)
	second := e.mustBump(t, e.key("ns", "a"))
	for _, min := range []int64{rvOf(t, first), rvOf(t, second)} {
		got := e.empty()
		if err := e.Store.Get(ctx(t), e.key("ns", "a"), storage.GetOptions{ResourceVersion: rvAt(min)}, got); err != nil {
			t.Fatalf("Get RV %d: %v", min, err)
		}
		if rvOf(t, got) < min {
			t.Fatalf("Get RV %d returned the older %s", min, describe(got))
		}
		if min == rvOf(t, second) && replicas(t, got) != 1 {
			t.Fatalf("Get RV %d returned replicas %d, want 1", min, replicas(t, got))
		}
	}
}

func testGetRVTooLarge(t *testing.T, e *Env) {
	e.mustCreate(t, "ns", "a", nil)
	future := e.etcdRev(t) + 1000
	err := e.Store.Get(ctx(t), e.key("ns", "a"), storage.GetOptions{ResourceVersion: rvAt(future)}, e.empty())
	expectCode(t, "Get with a future RV", err, storage.ErrTooLargeResourceVersion)
	if !apierrors.IsTimeout(err) || !apierrors.HasStatusCause(err, "ResourceVersionTooLarge") {
		t.Fatalf("want an apierrors Timeout with cause ResourceVersionTooLarge, got %v", err)
	}
}

func testGetNotFound(t *testing.T, e *Env) {
	e.mustCreate(t, "ns", "other", nil)
	err := e.Store.Get(ctx(t), e.key("ns", "missing"), storage.GetOptions{}, e.empty())
	expectCode(t, "Get of a missing key", err, storage.ErrNotFound)
	if !apierrors.IsNotFound(err) {
		t.Fatalf("apierrors.IsNotFound(%v) is false", err)
	}
}

func testGetIgnoreNotFound(t *testing.T, e *Env) {
	out := e.newObj("ns", "stale", map[string]string{"left": "over"})
	accessor(t, out).SetResourceVersion("5")
	if err := e.Store.Get(ctx(t), e.key("ns", "missing"), storage.GetOptions{IgnoreNotFound: true}, out); err != nil {
		t.Fatalf("Get with IgnoreNotFound: %v", err)
	}
	acc := accessor(t, out)
	if acc.GetName() != "" || acc.GetResourceVersion() != "" || len(acc.GetLabels()) != 0 {
		t.Fatalf("objPtr not zeroed: %s labels %v", describe(out), acc.GetLabels())
	}
}

func testGetIgnoreNotFoundExisting(t *testing.T, e *Env) {
	created := e.mustCreate(t, "ns", "a", nil)
	out := e.empty()
	if err := e.Store.Get(ctx(t), e.key("ns", "a"), storage.GetOptions{IgnoreNotFound: true}, out); err != nil {
		t.Fatalf("Get with IgnoreNotFound: %v", err)
	}
	if rvOf(t, out) != rvOf(t, created) {
		t.Fatalf("got %s, want %s", describe(out), describe(created))
	}
}
