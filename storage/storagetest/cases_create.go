package storagetest

import (
	"bytes"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/listwatch/listwatch/storage"
)

var createCases = []Case{
	{"CreateBasic", testCreateBasic},
	{"CreateIncreasingResourceVersions", testCreateIncreasingRVs},
	{"CreateKeyExists", testCreateKeyExists},
	{"CreateWithTTL", testCreateWithTTL},
	{"CreateResourceVersionSetRejected", testCreateRVSet},
	{"CreateNilOut", testCreateNilOut},
}

func testCreateBasic(t *testing.T, e *Env) {
	before := e.etcdRev(t)
	in := e.newObj("ns", "a", map[string]string{"app": "x"})
	setReplicas(t, in, 3)
	out := e.empty()
	if err := e.Store.Create(ctx(t), e.key("ns", "a"), in, out, 0); err != nil {
		t.Fatalf("Create: %v", err)
	}
	rv := rvOf(t, out)
	if rv <= before {
		t.Fatalf("out resourceVersion %d, want > etcd revision %d before the create", rv, before)
	}
	if acc := accessor(t, out); acc.GetName() != "a" || acc.GetNamespace() != "ns" || acc.GetLabels()["app"] != "x" {
		t.Fatalf("out is %s with labels %v, want ns/a with app=x", describe(out), acc.GetLabels())
	}
	if replicas(t, out) != 3 {
		t.Fatalf("out replicas %d, want 3", replicas(t, out))
	}
	raw, err := e.Client.Get(ctx(t), e.EtcdPrefix+e.key("ns", "a"))
	if err != nil || len(raw.Kvs) != 1 {
		t.Fatalf("raw etcd key %q: %v, %d kvs; want it stored", e.EtcdPrefix+e.key("ns", "a"), err, len(raw.Kvs))
	}
	if raw.Kvs[0].ModRevision != rv {
		t.Fatalf("raw mod_revision %d, out resourceVersion %d: must be equal", raw.Kvs[0].ModRevision, rv)
	}
	if bytes.Contains(raw.Kvs[0].Value, []byte(`"resourceVersion"`)) {
		t.Fatalf("stored bytes carry a resourceVersion: %s", raw.Kvs[0].Value)
	}
	got := e.mustGet(t, e.key("ns", "a"))
	if rvOf(t, got) != rv || replicas(t, got) != 3 {
		t.Fatalf("Get returned %s replicas %d, want rv %d replicas 3", describe(got), replicas(t, got), rv)
	}
}

func testCreateIncreasingRVs(t *testing.T, e *Env) {
	var last int64
	for _, n := range []string{"a", "b", "c"} {
		rv := rvOf(t, e.mustCreate(t, "ns", n, nil))
		if rv <= last {
			t.Fatalf("create of %s got resourceVersion %d, not after the previous %d", n, rv, last)
		}
		last = rv
	}
}

func testCreateKeyExists(t *testing.T, e *Env) {
	first := e.newObj("ns", "a", nil)
	setReplicas(t, first, 1)
	orig := e.mustCreateObj(t, first)
	again := e.newObj("ns", "a", nil)
	setReplicas(t, again, 2)
	err := e.Store.Create(ctx(t), e.key("ns", "a"), again, e.empty(), 0)
	expectCode(t, "second Create", err, storage.ErrKeyExists)
	if !apierrors.IsAlreadyExists(err) {
		t.Fatalf("apierrors.IsAlreadyExists(%v) is false", err)
	}
	got := e.mustGet(t, e.key("ns", "a"))
	if rvOf(t, got) != rvOf(t, orig) || replicas(t, got) != 1 {
		t.Fatalf("after the failed create the object is %s replicas %d, want it unchanged", describe(got), replicas(t, got))
	}
}

func testCreateWithTTL(t *testing.T, e *Env) {
	key := e.key("ns", "ttl")
	if err := e.Store.Create(ctx(t), key, e.newObj("ns", "ttl", nil), e.empty(), 1); err != nil {
		t.Fatalf("Create with ttl: %v", err)
	}
	e.mustGet(t, key) // exists right after the create
	waitGone(t, e, key)
}

// waitGone polls a latest-state Get until key reports not found.
func waitGone(t *testing.T, e *Env, key string) {
	t.Helper()
	eventually(t, key+" to expire", func() (bool, string) {
		err := e.Store.Get(ctx(t), key, storage.GetOptions{}, e.empty())
		if err == nil {
			return false, "still present"
		}
		if !storage.IsCode(err, storage.CodeNotFound) {
			t.Fatalf("Get %s: %v, want not found or success", key, err)
		}
		return true, ""
	})
}

func testCreateRVSet(t *testing.T, e *Env) {
	obj := e.newObj("ns", "a", nil)
	accessor(t, obj).SetResourceVersion("7")
	err := e.Store.Create(ctx(t), e.key("ns", "a"), obj, e.empty(), 0)
	expectOneOf(t, "Create with resourceVersion set", err, storage.ErrInvalidObj, storage.ErrInvalidArgument)
	if n := e.rawKeys(t); n != 0 {
		t.Fatalf("rejected create left %d keys in etcd", n)
	}
}

func testCreateNilOut(t *testing.T, e *Env) {
	if err := e.Store.Create(ctx(t), e.key("ns", "a"), e.newObj("ns", "a", nil), nil, 0); err != nil {
		t.Fatalf("Create with nil out: %v", err)
	}
	e.mustGet(t, e.key("ns", "a"))
}
