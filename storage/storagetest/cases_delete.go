package storagetest

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/storage"
)

var deleteCases = []Case{
	{"DeleteBasic", testDeleteBasic},
	{"DeleteNotFound", testDeleteNotFound},
	{"DeletePreconditionUIDFails", testDeletePreconditionUID},
	{"DeletePreconditionResourceVersionFails", testDeletePreconditionRV},
	{"DeletePreconditionsPass", testDeletePreconditionsPass},
	{"DeleteValidationRejects", testDeleteValidationRejects},
	{"DeleteStaleCachedObject", testDeleteStaleCached},
	{"DeleteValidationWithStaleCachedObject", testDeleteValidationStaleCached},
	{"DeletePreconditionWithStaleCachedObject", testDeletePreconditionStaleCached},
	{"DeleteConflictRetriesValidation", testDeleteConflictRetries},
	{"DeleteConcurrent", testDeleteConcurrent},
}

func (e *Env) deleteWith(t *testing.T, key string, pre *storage.Preconditions, validate storage.ValidateObjectFunc, cached runtime.Object) (runtime.Object, error) {
	t.Helper()
	if validate == nil {
		validate = storage.ValidateAllObjectFunc
	}
	out := e.empty()
	err := e.Store.Delete(ctx(t), key, out, pre, validate, cached, storage.DeleteOptions{})
	return out, err
}

func testDeleteBasic(t *testing.T, e *Env) {
	e.mustCreate(t, "ns", "a", nil)
	last := e.mustBump(t, e.key("ns", "a"))
	e.mustCreate(t, "ns", "b", nil)
	out, err := e.deleteWith(t, e.key("ns", "a"), nil, nil, nil)
	if err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if accessor(t, out).GetName() != "a" || replicas(t, out) != 1 || rvOf(t, out) < rvOf(t, last) {
		t.Fatalf("out %s replicas %d, want the last state of ns/a", describe(out), replicas(t, out))
	}
	err = e.Store.Get(ctx(t), e.key("ns", "a"), storage.GetOptions{}, e.empty())
	expectCode(t, "Get after Delete", err, storage.ErrNotFound)
	if e.rawModRevision(t, e.key("ns", "a")) != 0 {
		t.Fatal("key still in etcd")
	}
	e.mustGet(t, e.key("ns", "b"))
}

func testDeleteNotFound(t *testing.T, e *Env) {
	_, err := e.deleteWith(t, e.key("ns", "missing"), nil, nil, nil)
	expectCode(t, "Delete of a missing key", err, storage.ErrNotFound)
	if !apierrors.IsNotFound(err) {
		t.Fatalf("apierrors.IsNotFound(%v) is false", err)
	}
}

func expectRejectedDelete(t *testing.T, e *Env, key string, pre *storage.Preconditions, cached runtime.Object) {
	t.Helper()
	before := e.rawModRevision(t, key)
	_, err := e.deleteWith(t, key, pre, nil, cached)
	expectCode(t, "Delete with failing preconditions", err, storage.ErrConflict)
	if !apierrors.IsConflict(err) {
		t.Fatalf("apierrors.IsConflict(%v) is false", err)
	}
	if after := e.rawModRevision(t, key); after != before {
		t.Fatalf("object changed (mod revision %d -> %d) despite failing preconditions", before, after)
	}
}

func testDeletePreconditionUID(t *testing.T, e *Env) {
	e.createWithUID(t, "ns", "a", "uid-1")
	expectRejectedDelete(t, e, e.key("ns", "a"), storage.NewUIDPreconditions("uid-2"), nil)
}

func testDeletePreconditionRV(t *testing.T, e *Env) {
	cur := e.mustCreate(t, "ns", "a", nil)
	e.mustBump(t, e.key("ns", "a"))
	old := accessor(t, cur).GetResourceVersion()
	expectRejectedDelete(t, e, e.key("ns", "a"), &storage.Preconditions{ResourceVersion: &old}, nil)
}

func testDeletePreconditionsPass(t *testing.T, e *Env) {
	cur := e.createWithUID(t, "ns", "a", "uid-1")
	pre := storage.NewUIDPreconditions("uid-1")
	rv := accessor(t, cur).GetResourceVersion()
	pre.ResourceVersion = &rv
	if _, err := e.deleteWith(t, e.key("ns", "a"), pre, nil, nil); err != nil {
		t.Fatalf("Delete with matching preconditions: %v", err)
	}
	if e.rawModRevision(t, e.key("ns", "a")) != 0 {
		t.Fatal("key still in etcd")
	}
}

var errNoDelete = errors.New("storagetest: deletion refused")

func testDeleteValidationRejects(t *testing.T, e *Env) {
	e.mustCreate(t, "ns", "a", nil)
	var got runtime.Object
	_, err := e.deleteWith(t, e.key("ns", "a"), nil, func(_ context.Context, obj runtime.Object) error {
		got = obj
		return errNoDelete
	}, nil)
	if !errors.Is(err, errNoDelete) {
		t.Fatalf("Delete returned %v, want the validation error", err)
	}
	if got == nil || accessor(t, got).GetName() != "a" {
		t.Fatal("validateDeletion was not given the stored object")
	}
	e.mustGet(t, e.key("ns", "a"))
}

func testDeleteStaleCached(t *testing.T, e *Env) {
	stale := e.mustCreate(t, "ns", "a", nil)
	e.mustBump(t, e.key("ns", "a"))
	out, err := e.deleteWith(t, e.key("ns", "a"), nil, nil, stale.DeepCopyObject())
	if err != nil {
		t.Fatalf("Delete with a stale cached object: %v", err)
	}
	if replicas(t, out) != 1 {
		t.Fatalf("out replicas %d, want the stored state (1), not the stale cached one", replicas(t, out))
	}
	if e.rawModRevision(t, e.key("ns", "a")) != 0 {
		t.Fatal("key still in etcd")
	}
}

func testDeleteValidationStaleCached(t *testing.T, e *Env) {
	stale := e.mustCreate(t, "ns", "a", nil)
	e.mustBump(t, e.key("ns", "a"))
	// Validation accepts only the stored state, so it fails on the stale
	// cached object and must be retried on a fresh read.
	validate := func(_ context.Context, obj runtime.Object) error {
		if replicas(t, obj) != 1 {
			return errNoDelete
		}
		return nil
	}
	if _, err := e.deleteWith(t, e.key("ns", "a"), nil, validate, stale.DeepCopyObject()); err != nil {
		t.Fatalf("Delete whose validation only fails on the stale cached object: %v", err)
	}
	if e.rawModRevision(t, e.key("ns", "a")) != 0 {
		t.Fatal("key still in etcd")
	}
}

func testDeletePreconditionStaleCached(t *testing.T, e *Env) {
	stale := e.mustCreate(t, "ns", "a", nil)
	cur := e.mustBump(t, e.key("ns", "a"))
	old := accessor(t, stale).GetResourceVersion()
	// Holds only on the stale cached object: must be rejected.
	expectRejectedDelete(t, e, e.key("ns", "a"), &storage.Preconditions{ResourceVersion: &old}, stale.DeepCopyObject())
	// Holds only on the stored object: must succeed.
	rv := accessor(t, cur).GetResourceVersion()
	if _, err := e.deleteWith(t, e.key("ns", "a"), &storage.Preconditions{ResourceVersion: &rv}, nil, stale.DeepCopyObject()); err != nil {
		t.Fatalf("Delete whose precondition only fails on the stale cached object: %v", err)
	}
}

func testDeleteConflictRetries(t *testing.T, e *Env) {
	e.mustCreate(t, "ns", "a", nil)
	key := e.key("ns", "a")
	var calls atomic.Int32
	validate := func(_ context.Context, obj runtime.Object) error {
		if calls.Add(1) == 1 {
			// A concurrent writer changes the object between the read and the delete.
			e.mustBump(t, key)
		}
		return nil
	}
	out, err := e.deleteWith(t, key, nil, validate, nil)
	if err != nil {
		t.Fatalf("Delete racing an update: %v", err)
	}
	if calls.Load() < 2 {
		t.Fatalf("validateDeletion called %d times; the conflicting write must make Delete re-validate the fresh object", calls.Load())
	}
	if replicas(t, out) != 1 {
		t.Fatalf("out replicas %d, want the state written by the concurrent update (1)", replicas(t, out))
	}
	if e.rawModRevision(t, key) != 0 {
		t.Fatal("key still in etcd")
	}
}

func testDeleteConcurrent(t *testing.T, e *Env) {
	e.mustCreate(t, "ns", "a", nil)
	const n = 5
	var wg sync.WaitGroup
	var ok, notFound atomic.Int32
	errs := make(chan error, n)
	for range n {
		wg.Go(func() {
			err := e.Store.Delete(ctx(t), e.key("ns", "a"), e.empty(), nil, storage.ValidateAllObjectFunc, nil, storage.DeleteOptions{})
			switch {
			case err == nil:
				ok.Add(1)
			case errors.Is(err, storage.ErrNotFound):
				notFound.Add(1)
			default:
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("concurrent Delete: %v", err)
	}
	if ok.Load() != 1 || notFound.Load() != n-1 {
		t.Fatalf("%d deletes succeeded and %d got not found, want 1 and %d", ok.Load(), notFound.Load(), n-1)
	}
}
