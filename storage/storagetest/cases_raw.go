package storagetest

import (
	"errors"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
)

// Cases that reach past the Interface: values written straight into etcd,
// objects etcd refuses, and cached objects that no longer exist.
var rawCases = []Case{
	{"GetCorruptObject", testGetCorrupt},
	{"ListCorruptObject", testListCorrupt},
	{"ListNamesEveryCorruptObject", testListEveryCorrupt},
	{"DeleteCorruptObject", testDeleteCorrupt},
	{"CreateObjectTooLarge", testCreateTooLarge},
	{"UpdateCachedObjectAlreadyDeleted", testUpdateCachedDeleted},
	{"DeleteCachedObjectAlreadyDeleted", testDeleteCachedDeleted},
}

// putCorrupt stores bytes no codec can decode at key, bypassing the store.
func (e *Env) putCorrupt(t *testing.T, key string) {
	t.Helper()
	if _, err := e.Client.Put(ctx(t), e.EtcdPrefix+key, "\x00\x01 not an object"); err != nil {
		t.Fatalf("raw put: %v", err)
	}
}

// expectCorrupt checks a corrupt-object error naming key: a 500
// InternalError for one object, a 500 StoreReadError (Kubernetes' aggregated
// list error) from a list.
func expectCorrupt(t *testing.T, op, key string, err error) {
	t.Helper()
	expectCode(t, op, err, storage.ErrCorruptObj)
	if !strings.Contains(err.Error(), key) {
		t.Fatalf("%s: error %q does not name the corrupt key %q", op, err, key)
	}
	if !apierrors.IsInternalError(err) && !apierrors.IsStoreReadError(err) {
		t.Fatalf("%s: %v is neither InternalError nor StoreReadError", op, err)
	}
}

// expectCorruptList checks the error of a list over corrupt values naming key.
func expectCorruptList(t *testing.T, op, key string, err error) {
	t.Helper()
	expectCorrupt(t, op, key, err)
	if !apierrors.IsStoreReadError(err) {
		t.Fatalf("%s: %v is not a StoreReadError", op, err)
	}
}

func testGetCorrupt(t *testing.T, e *Env) {
	key := e.key("ns", "bad")
	e.putCorrupt(t, key)
	expectCorrupt(t, "Get of a corrupt value", key, e.Store.Get(ctx(t), key, storage.GetOptions{}, e.empty()))
}

func testListCorrupt(t *testing.T, e *Env) {
	e.mustCreate(t, "ns", "a", nil)
	key := e.key("ns", "bad")
	e.putCorrupt(t, key)
	err := e.Store.GetList(ctx(t), e.ResourcePrefix, everything, e.emptyList())
	expectCorruptList(t, "GetList over a corrupt value", key, err)
}

// A list over several corrupt values names every corrupt key, in the
// message and as one Status cause each, not only the first.
func testListEveryCorrupt(t *testing.T, e *Env) {
	e.mustCreate(t, "ns", "a", nil)
	keys := []string{e.key("ns", "bad1"), e.key("ns", "bad2"), e.key("ns", "bad3")}
	for _, k := range keys {
		e.putCorrupt(t, k)
	}
	e.mustCreate(t, "ns", "z", nil)
	err := e.Store.GetList(ctx(t), e.ResourcePrefix, everything, e.emptyList())
	expectCorruptList(t, "GetList over corrupt values", keys[0], err)
	var st apierrors.APIStatus
	if !errors.As(err, &st) || st.Status().Details == nil {
		t.Fatalf("GetList over corrupt values: %v has no Status details", err)
	}
	var fields []string
	for _, c := range st.Status().Details.Causes {
		fields = append(fields, c.Field)
	}
	if !slices.Equal(fields, keys) {
		t.Fatalf("Status causes name %v, want every corrupt key %v", fields, keys)
	}
	for _, k := range keys {
		if !strings.Contains(err.Error(), k) {
			t.Fatalf("error %q does not name %q", err, k)
		}
	}
}

func testDeleteCorrupt(t *testing.T, e *Env) {
	key := e.key("ns", "bad")
	e.putCorrupt(t, key)
	err := e.Store.Delete(ctx(t), key, e.empty(), nil, storage.ValidateAllObjectFunc, nil, storage.DeleteOptions{})
	expectCorrupt(t, "Delete of a corrupt value", key, err)
	if e.rawModRevision(t, key) == 0 {
		t.Fatal("corrupt value deleted without IgnoreStoreReadError")
	}
	err = e.Store.Delete(ctx(t), key, e.empty(), nil, storage.ValidateAllObjectFunc, nil,
		storage.DeleteOptions{IgnoreStoreReadError: true})
	if err != nil {
		t.Fatalf("Delete with IgnoreStoreReadError: %v", err)
	}
	if e.rawModRevision(t, key) != 0 {
		t.Fatal("corrupt value still in etcd after Delete with IgnoreStoreReadError")
	}
}

func testCreateTooLarge(t *testing.T, e *Env) {
	obj := e.newObj("ns", "big", nil)
	// Above etcd's default request limit (1.5 MiB), below the client's send limit (2 MiB).
	data := strings.Repeat("x", 1700<<10)
	switch o := obj.(type) {
	case *widget.Widget:
		o.Spec.Data = data
	default:
		if err := setNested(obj, data, "spec", "data"); err != nil {
			t.Fatal(err)
		}
	}
	err := e.Store.Create(ctx(t), e.key("ns", "big"), obj, e.empty(), 0)
	expectOneOf(t, "Create of an object above etcd's request limit", err, storage.ErrRequestTooLarge, storage.ErrInvalidObj)
	if !apierrors.IsRequestEntityTooLargeError(err) && !apierrors.IsInvalid(err) {
		t.Fatalf("apierrors: %v is neither RequestEntityTooLarge nor Invalid", err)
	}
	e.expectNothingWritten(t)
}

func testUpdateCachedDeleted(t *testing.T, e *Env) {
	cached := e.mustCreate(t, "ns", "a", nil)
	e.mustDelete(t, e.key("ns", "a"))
	err := e.Store.GuaranteedUpdate(ctx(t), e.key("ns", "a"), e.empty(), false, nil, increment(t), cached.DeepCopyObject(), storage.UpdateOptions{})
	expectCode(t, "GuaranteedUpdate with a cached object deleted meanwhile", err, storage.ErrNotFound)
	e.expectNothingWritten(t)
}

func testDeleteCachedDeleted(t *testing.T, e *Env) {
	cached := e.mustCreate(t, "ns", "a", nil)
	e.mustDelete(t, e.key("ns", "a"))
	_, err := e.deleteWith(t, e.key("ns", "a"), nil, nil, cached.DeepCopyObject())
	expectCode(t, "Delete with a cached object deleted meanwhile", err, storage.ErrNotFound)
}
