package storagetest

import (
	"bytes"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/listwatch/listwatch/storage"
)

var updateCases = []Case{
	{"UpdateBasic", testUpdateBasic},
	{"UpdateNotFound", testUpdateNotFound},
	{"UpdateIgnoreNotFoundCreates", testUpdateIgnoreNotFound},
	{"UpdateConcurrentConflicts", testUpdateConcurrent},
	{"UpdateStaleCachedObject", testUpdateStaleCached},
	{"UpdateCurrentCachedObject", testUpdateCurrentCached},
	{"UpdateNoOpKeepsResourceVersion", testUpdateNoOp},
	{"UpdateNoOpOnStaleCachedObjectWrites", testUpdateNoOpStaleCached},
	{"UpdatePreconditionUIDFails", testUpdatePreconditionUID},
	{"UpdatePreconditionResourceVersionFails", testUpdatePreconditionRV},
	{"UpdatePreconditionsPass", testUpdatePreconditionsPass},
	{"UpdatePreconditionWithStaleCachedObject", testUpdatePreconditionStaleCached},
	{"UpdateTryUpdateErrorAborts", testUpdateTryUpdateError},
	{"UpdateIgnoresResourceVersionInResult", testUpdateIgnoresRVInResult},
	{"UpdateSetsTTL", testUpdateSetsTTL},
	{"UpdateKeepsTTL", testUpdateKeepsTTL},
	{"UpdateClearsTTL", testUpdateClearsTTL},
}

// increment is an UpdateFunc that bumps spec.replicas.
func increment(t *testing.T) storage.UpdateFunc {
	return func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
		out := in.DeepCopyObject()
		setReplicas(t, out, replicas(t, out)+1)
		return out, nil, nil
	}
}

// rawModRevision returns the mod revision of key in etcd, 0 when absent.
func (e *Env) rawModRevision(t *testing.T, key string) int64 {
	t.Helper()
	resp, err := e.Client.Get(ctx(t), e.EtcdPrefix+key)
	if err != nil {
		t.Fatalf("raw get: %v", err)
	}
	if len(resp.Kvs) == 0 {
		return 0
	}
	return resp.Kvs[0].ModRevision
}

func testUpdateBasic(t *testing.T, e *Env) {
	created := e.mustCreate(t, "ns", "a", nil)
	key := e.key("ns", "a")
	var seen storage.ResponseMeta
	var inputRV int64
	dest := e.empty()
	err := e.Store.GuaranteedUpdate(ctx(t), key, dest, false, nil,
		func(in runtime.Object, res storage.ResponseMeta) (runtime.Object, *uint64, error) {
			seen, inputRV = res, rvOf(t, in)
			out := in.DeepCopyObject()
			setReplicas(t, out, 5)
			setLabels(t, out, map[string]string{"updated": "yes"})
			return out, nil, nil
		}, nil, storage.UpdateOptions{})
	if err != nil {
		t.Fatalf("GuaranteedUpdate: %v", err)
	}
	if inputRV != rvOf(t, created) || int64(seen.ResourceVersion) != rvOf(t, created) {
		t.Fatalf("tryUpdate saw object RV %d and ResponseMeta RV %d, want %d", inputRV, seen.ResourceVersion, rvOf(t, created))
	}
	if rvOf(t, dest) <= rvOf(t, created) || replicas(t, dest) != 5 || accessor(t, dest).GetLabels()["updated"] != "yes" {
		t.Fatalf("destination %s replicas %d labels %v, want a newer RV, replicas 5, updated=yes",
			describe(dest), replicas(t, dest), accessor(t, dest).GetLabels())
	}
	if e.rawModRevision(t, key) != rvOf(t, dest) {
		t.Fatalf("etcd mod revision %d, destination RV %d", e.rawModRevision(t, key), rvOf(t, dest))
	}
	if got := e.mustGet(t, key); rvOf(t, got) != rvOf(t, dest) || replicas(t, got) != 5 {
		t.Fatalf("Get after update: %s replicas %d", describe(got), replicas(t, got))
	}
}

func testUpdateNotFound(t *testing.T, e *Env) {
	called := false
	err := e.Store.GuaranteedUpdate(ctx(t), e.key("ns", "missing"), e.empty(), false, nil,
		func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
			called = true
			return in, nil, nil
		}, nil, storage.UpdateOptions{})
	expectCode(t, "GuaranteedUpdate of a missing key", err, storage.ErrNotFound)
	if !apierrors.IsNotFound(err) {
		t.Fatalf("apierrors.IsNotFound(%v) is false", err)
	}
	if called {
		t.Fatal("tryUpdate was called for a missing key without ignoreNotFound")
	}
	if n := e.rawKeys(t); n != 0 {
		t.Fatalf("%d keys written", n)
	}
}

func testUpdateIgnoreNotFound(t *testing.T, e *Env) {
	key := e.key("ns", "new")
	var inputName string
	var inputRV uint64
	dest := e.empty()
	err := e.Store.GuaranteedUpdate(ctx(t), key, dest, true, nil,
		func(in runtime.Object, res storage.ResponseMeta) (runtime.Object, *uint64, error) {
			inputName, inputRV = accessor(t, in).GetName(), res.ResourceVersion
			obj := e.newObj("ns", "new", nil)
			setReplicas(t, obj, 7)
			return obj, nil, nil
		}, nil, storage.UpdateOptions{})
	if err != nil {
		t.Fatalf("GuaranteedUpdate with ignoreNotFound: %v", err)
	}
	if inputName != "" || inputRV != 0 {
		t.Fatalf("tryUpdate got name %q RV %d for a missing key, want a zero object", inputName, inputRV)
	}
	if replicas(t, dest) != 7 || rvOf(t, dest) != e.rawModRevision(t, key) {
		t.Fatalf("destination %s replicas %d, want the created object", describe(dest), replicas(t, dest))
	}
	if got := e.mustGet(t, key); replicas(t, got) != 7 {
		t.Fatalf("Get: replicas %d, want 7", replicas(t, got))
	}
}

func testUpdateConcurrent(t *testing.T, e *Env) {
	e.mustCreate(t, "ns", "a", nil)
	key := e.key("ns", "a")
	const workers, each = 6, 5
	var wg sync.WaitGroup
	var attempts atomic.Int64
	errs := make(chan error, workers*each)
	for range workers {
		wg.Go(func() {
			for range each {
				err := e.Store.GuaranteedUpdate(ctx(t), key, e.empty(), false, nil,
					func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
						attempts.Add(1)
						out := in.DeepCopyObject()
						setReplicas(t, out, replicas(t, out)+1)
						return out, nil, nil
					}, nil, storage.UpdateOptions{})
				if err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("concurrent GuaranteedUpdate: %v", err)
	}
	if got := replicas(t, e.mustGet(t, key)); got != workers*each {
		t.Fatalf("replicas %d after %d concurrent increments (%d tryUpdate calls): updates were lost", got, workers*each, attempts.Load())
	}
}

func testUpdateStaleCached(t *testing.T, e *Env) {
	stale := e.mustCreate(t, "ns", "a", nil)
	key := e.key("ns", "a")
	e.mustBump(t, key)
	e.mustBump(t, key)
	dest := e.empty()
	if err := e.Store.GuaranteedUpdate(ctx(t), key, dest, false, nil, increment(t), stale.DeepCopyObject(), storage.UpdateOptions{}); err != nil {
		t.Fatalf("GuaranteedUpdate with a stale cached object: %v", err)
	}
	if replicas(t, dest) != 3 || replicas(t, e.mustGet(t, key)) != 3 {
		t.Fatalf("replicas %d after increments 2 + 1 with a stale cached object, want 3", replicas(t, dest))
	}
}

func testUpdateCurrentCached(t *testing.T, e *Env) {
	cur := e.mustCreate(t, "ns", "a", nil)
	key := e.key("ns", "a")
	dest := e.empty()
	if err := e.Store.GuaranteedUpdate(ctx(t), key, dest, false, nil, increment(t), cur.DeepCopyObject(), storage.UpdateOptions{}); err != nil {
		t.Fatalf("GuaranteedUpdate with the current cached object: %v", err)
	}
	if replicas(t, dest) != 1 || rvOf(t, dest) <= rvOf(t, cur) {
		t.Fatalf("destination %s replicas %d, want a new write with replicas 1", describe(dest), replicas(t, dest))
	}
}

func testUpdateNoOp(t *testing.T, e *Env) {
	cur := e.mustCreate(t, "ns", "a", map[string]string{"k": "v"})
	key := e.key("ns", "a")
	dest := e.empty()
	err := e.Store.GuaranteedUpdate(ctx(t), key, dest, false, nil,
		func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
			return in.DeepCopyObject(), nil, nil
		}, nil, storage.UpdateOptions{})
	if err != nil {
		t.Fatalf("no-op GuaranteedUpdate: %v", err)
	}
	if rvOf(t, dest) != rvOf(t, cur) || e.rawModRevision(t, key) != rvOf(t, cur) {
		t.Fatalf("no-op update: destination RV %d, etcd mod revision %d, want both unchanged at %d",
			rvOf(t, dest), e.rawModRevision(t, key), rvOf(t, cur))
	}
}

func testUpdateNoOpStaleCached(t *testing.T, e *Env) {
	stale := e.mustCreate(t, "ns", "a", nil) // replicas 0
	key := e.key("ns", "a")
	bumped := e.mustBump(t, key) // replicas 1
	dest := e.empty()
	// The result equals the stale cached object, but not what is stored.
	err := e.Store.GuaranteedUpdate(ctx(t), key, dest, false, nil,
		func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
			out := in.DeepCopyObject()
			setReplicas(t, out, 0)
			return out, nil, nil
		}, stale.DeepCopyObject(), storage.UpdateOptions{})
	if err != nil {
		t.Fatalf("GuaranteedUpdate: %v", err)
	}
	got := e.mustGet(t, key)
	if replicas(t, got) != 0 || rvOf(t, got) <= rvOf(t, bumped) || rvOf(t, dest) != rvOf(t, got) {
		t.Fatalf("stored %s replicas %d (destination %s): the write was skipped by comparing with the stale cached object",
			describe(got), replicas(t, got), describe(dest))
	}
}

// withUID creates ns/name carrying uid.
func (e *Env) createWithUID(t *testing.T, ns, name, uid string) runtime.Object {
	t.Helper()
	obj := e.newObj(ns, name, nil)
	accessor(t, obj).SetUID(types.UID(uid))
	return e.mustCreateObj(t, obj)
}

func expectRejectedUpdate(t *testing.T, e *Env, key string, pre *storage.Preconditions, cached runtime.Object) {
	t.Helper()
	before := e.rawModRevision(t, key)
	called := false
	err := e.Store.GuaranteedUpdate(ctx(t), key, e.empty(), false, pre,
		func(in runtime.Object, res storage.ResponseMeta) (runtime.Object, *uint64, error) {
			called = true
			return increment(t)(in, res)
		}, cached, storage.UpdateOptions{})
	expectCode(t, "GuaranteedUpdate with failing preconditions", err, storage.ErrConflict)
	if !apierrors.IsConflict(err) {
		t.Fatalf("apierrors.IsConflict(%v) is false", err)
	}
	if called && cached == nil {
		t.Fatal("tryUpdate was called although the preconditions fail on the stored object")
	}
	if after := e.rawModRevision(t, key); after != before {
		t.Fatalf("object rewritten (mod revision %d -> %d) despite failing preconditions", before, after)
	}
}

func testUpdatePreconditionUID(t *testing.T, e *Env) {
	e.createWithUID(t, "ns", "a", "uid-1")
	expectRejectedUpdate(t, e, e.key("ns", "a"), storage.NewUIDPreconditions("uid-2"), nil)
}

func testUpdatePreconditionRV(t *testing.T, e *Env) {
	cur := e.mustCreate(t, "ns", "a", nil)
	e.mustBump(t, e.key("ns", "a"))
	old := accessor(t, cur).GetResourceVersion()
	expectRejectedUpdate(t, e, e.key("ns", "a"), &storage.Preconditions{ResourceVersion: &old}, nil)
}

func testUpdatePreconditionsPass(t *testing.T, e *Env) {
	cur := e.createWithUID(t, "ns", "a", "uid-1")
	pre := storage.NewUIDPreconditions("uid-1")
	rv := accessor(t, cur).GetResourceVersion()
	pre.ResourceVersion = &rv
	dest := e.empty()
	if err := e.Store.GuaranteedUpdate(ctx(t), e.key("ns", "a"), dest, false, pre, increment(t), nil, storage.UpdateOptions{}); err != nil {
		t.Fatalf("GuaranteedUpdate with matching preconditions: %v", err)
	}
	if replicas(t, dest) != 1 {
		t.Fatalf("replicas %d, want 1", replicas(t, dest))
	}
}

func testUpdatePreconditionStaleCached(t *testing.T, e *Env) {
	stale := e.createWithUID(t, "ns", "a", "uid-1")
	cur := e.mustBump(t, e.key("ns", "a"))
	rv := accessor(t, cur).GetResourceVersion()
	// The precondition holds on the stored object but not on the stale cached one.
	pre := &storage.Preconditions{ResourceVersion: &rv}
	dest := e.empty()
	if err := e.Store.GuaranteedUpdate(ctx(t), e.key("ns", "a"), dest, false, pre, increment(t), stale.DeepCopyObject(), storage.UpdateOptions{}); err != nil {
		t.Fatalf("GuaranteedUpdate whose precondition only fails on the stale cached object: %v", err)
	}
	if replicas(t, dest) != 2 {
		t.Fatalf("replicas %d, want 2", replicas(t, dest))
	}
	// And the reverse: holds on the stale cached object only.
	old := accessor(t, stale).GetResourceVersion()
	expectRejectedUpdate(t, e, e.key("ns", "a"), &storage.Preconditions{ResourceVersion: &old}, stale.DeepCopyObject())
}

var errAbort = errors.New("storagetest: tryUpdate refuses")

func testUpdateTryUpdateError(t *testing.T, e *Env) {
	cur := e.mustCreate(t, "ns", "a", nil)
	key := e.key("ns", "a")
	err := e.Store.GuaranteedUpdate(ctx(t), key, e.empty(), false, nil,
		func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
			return nil, nil, errAbort
		}, nil, storage.UpdateOptions{})
	if !errors.Is(err, errAbort) {
		t.Fatalf("GuaranteedUpdate returned %v, want the tryUpdate error", err)
	}
	if e.rawModRevision(t, key) != rvOf(t, cur) {
		t.Fatal("object written although tryUpdate failed")
	}
}

func testUpdateIgnoresRVInResult(t *testing.T, e *Env) {
	e.mustCreate(t, "ns", "a", nil)
	key := e.key("ns", "a")
	dest := e.empty()
	err := e.Store.GuaranteedUpdate(ctx(t), key, dest, false, nil,
		func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
			out := in.DeepCopyObject()
			setReplicas(t, out, 1)
			accessor(t, out).SetResourceVersion("123456789")
			return out, nil, nil
		}, nil, storage.UpdateOptions{})
	if err != nil {
		t.Fatalf("GuaranteedUpdate: %v", err)
	}
	if rvOf(t, dest) != e.rawModRevision(t, key) {
		t.Fatalf("destination RV %d, want the etcd mod revision %d", rvOf(t, dest), e.rawModRevision(t, key))
	}
	raw, err := e.Client.Get(ctx(t), e.EtcdPrefix+key)
	if err != nil || len(raw.Kvs) != 1 {
		t.Fatalf("raw get: %v", err)
	}
	if bytes.Contains(raw.Kvs[0].Value, []byte("123456789")) {
		t.Fatalf("stored bytes carry the resourceVersion from tryUpdate: %s", raw.Kvs[0].Value)
	}
}

func ttlUpdate(t *testing.T, ttl *uint64, seen *storage.ResponseMeta) storage.UpdateFunc {
	return func(in runtime.Object, res storage.ResponseMeta) (runtime.Object, *uint64, error) {
		*seen = res
		out := in.DeepCopyObject()
		setReplicas(t, out, replicas(t, out)+1)
		return out, ttl, nil
	}
}

func testUpdateSetsTTL(t *testing.T, e *Env) {
	e.mustCreate(t, "ns", "a", nil)
	key := e.key("ns", "a")
	var seen storage.ResponseMeta
	if err := e.Store.GuaranteedUpdate(ctx(t), key, e.empty(), false, nil, ttlUpdate(t, ptr[uint64](1), &seen), nil, storage.UpdateOptions{}); err != nil {
		t.Fatalf("GuaranteedUpdate with ttl: %v", err)
	}
	if seen.TTL != 0 {
		t.Fatalf("tryUpdate saw TTL %d on an object without one", seen.TTL)
	}
	waitGone(t, e, key)
}

func testUpdateKeepsTTL(t *testing.T, e *Env) {
	key := e.key("ns", "a")
	if err := e.Store.Create(ctx(t), key, e.newObj("ns", "a", nil), nil, 2); err != nil {
		t.Fatalf("Create with ttl: %v", err)
	}
	var seen storage.ResponseMeta
	if err := e.Store.GuaranteedUpdate(ctx(t), key, e.empty(), false, nil, ttlUpdate(t, nil, &seen), nil, storage.UpdateOptions{}); err != nil {
		t.Fatalf("GuaranteedUpdate keeping the ttl: %v", err)
	}
	if seen.TTL <= 0 {
		t.Fatalf("tryUpdate saw TTL %d on an object created with a 2 s ttl", seen.TTL)
	}
	if replicas(t, e.mustGet(t, key)) != 1 {
		t.Fatal("update not applied")
	}
	waitGone(t, e, key)
}

func testUpdateClearsTTL(t *testing.T, e *Env) {
	key := e.key("ns", "a")
	if err := e.Store.Create(ctx(t), key, e.newObj("ns", "a", nil), nil, 1); err != nil {
		t.Fatalf("Create with ttl: %v", err)
	}
	var seen storage.ResponseMeta
	if err := e.Store.GuaranteedUpdate(ctx(t), key, e.empty(), false, nil, ttlUpdate(t, ptr[uint64](0), &seen), nil, storage.UpdateOptions{}); err != nil {
		t.Fatalf("GuaranteedUpdate clearing the ttl: %v", err)
	}
	// A witness created later with the same ttl expires after the original
	// lease would have; once it is gone, the cleared object must remain.
	witness := e.key("ns", "witness")
	if err := e.Store.Create(ctx(t), witness, e.newObj("ns", "witness", nil), nil, 1); err != nil {
		t.Fatalf("Create witness: %v", err)
	}
	waitGone(t, e, witness)
	if err := e.Store.Get(ctx(t), key, storage.GetOptions{}, e.empty()); err != nil {
		t.Fatalf("object whose ttl was cleared: %v", err)
	}
}
