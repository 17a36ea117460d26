package storagetest

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/storage"
)

// This file holds the store operations cases use as preconditions: each
// fails the case at once when the operation it relies on fails.

// WaitTimeoutEnv names an environment variable that, when set to a Go
// duration, replaces the default bound (15 s) on every wait of the suite for
// something that must happen. The suite's own mutation test shortens it.
const WaitTimeoutEnv = "STORAGETEST_WAIT_TIMEOUT"

// waitTimeout bounds every wait for something that must happen.
var waitTimeout = func() time.Duration {
	if d, err := time.ParseDuration(os.Getenv(WaitTimeoutEnv)); err == nil && d > 0 {
		return d
	}
	return 15 * time.Second
}()

// quietWindow is how long a case watches for something that must not happen.
const quietWindow = 300 * time.Millisecond

// ctx returns a context for one case, cancelled when it ends.
func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

// mustCreate creates ns/name with the given labels and returns the stored object.
func (e *Env) mustCreate(t *testing.T, ns, name string, lbls map[string]string) runtime.Object {
	t.Helper()
	return e.mustCreateObj(t, e.newObj(ns, name, lbls))
}

// mustCreateObj creates obj and returns the stored object.
func (e *Env) mustCreateObj(t *testing.T, obj runtime.Object) runtime.Object {
	t.Helper()
	acc := accessor(t, obj)
	out := e.empty()
	if err := e.Store.Create(ctx(t), e.key(acc.GetNamespace(), acc.GetName()), obj, out, 0); err != nil {
		t.Fatalf("Create %s/%s: %v", acc.GetNamespace(), acc.GetName(), err)
	}
	return out
}

// mustGet reads key at the latest state.
func (e *Env) mustGet(t *testing.T, key string) runtime.Object {
	t.Helper()
	out := e.empty()
	if err := e.Store.Get(ctx(t), key, storage.GetOptions{}, out); err != nil {
		t.Fatalf("Get %s: %v", key, err)
	}
	return out
}

// mustList lists key with opts and returns the list.
func (e *Env) mustList(t *testing.T, key string, opts storage.ListOptions) runtime.Object {
	t.Helper()
	list := e.emptyList()
	if err := e.Store.GetList(ctx(t), key, opts, list); err != nil {
		t.Fatalf("GetList %s %+v: %v", key, opts, err)
	}
	checkListInvariants(t, list)
	return list
}

// mustUpdate applies mutate to key with GuaranteedUpdate and returns the stored result.
func (e *Env) mustUpdate(t *testing.T, key string, mutate func(obj runtime.Object)) runtime.Object {
	t.Helper()
	out := e.empty()
	err := e.Store.GuaranteedUpdate(ctx(t), key, out, false, nil,
		func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
			next := in.DeepCopyObject()
			mutate(next)
			return next, nil, nil
		}, nil, storage.UpdateOptions{})
	if err != nil {
		t.Fatalf("GuaranteedUpdate %s: %v", key, err)
	}
	return out
}

// mustBump increments spec.replicas of key and returns the stored result.
func (e *Env) mustBump(t *testing.T, key string) runtime.Object {
	t.Helper()
	return e.mustUpdate(t, key, func(obj runtime.Object) { setReplicas(t, obj, replicas(t, obj)+1) })
}

// mustDelete deletes key and returns its last state.
func (e *Env) mustDelete(t *testing.T, key string) runtime.Object {
	t.Helper()
	out := e.empty()
	if err := e.Store.Delete(ctx(t), key, out, nil, storage.ValidateAllObjectFunc, nil, storage.DeleteOptions{}); err != nil {
		t.Fatalf("Delete %s: %v", key, err)
	}
	return out
}

// etcdRev returns etcd's current revision, read directly.
func (e *Env) etcdRev(t *testing.T) int64 {
	t.Helper()
	resp, err := e.Client.Get(ctx(t), "/storagetest-revision-probe", clientv3.WithCountOnly())
	if err != nil {
		t.Fatalf("reading etcd revision: %v", err)
	}
	return resp.Header.Revision
}

// bumpUnrelated writes a key outside the store's prefix and returns its revision.
func (e *Env) bumpUnrelated(t *testing.T) int64 {
	t.Helper()
	resp, err := e.Client.Put(ctx(t), "/storagetest-unrelated"+e.EtcdPrefix, "x")
	if err != nil {
		t.Fatalf("writing unrelated key: %v", err)
	}
	return resp.Header.Revision
}

// rawKeys counts the raw etcd keys under the store's prefix.
func (e *Env) rawKeys(t *testing.T) int64 {
	t.Helper()
	resp, err := e.Client.Get(ctx(t), e.EtcdPrefix+"/", clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatalf("counting raw keys: %v", err)
	}
	return resp.Count
}

// rawCountBelow counts raw etcd keys starting with the given prefix, wherever they are.
func (e *Env) rawCountBelow(t *testing.T, prefix string) int64 {
	t.Helper()
	resp, err := e.Client.Get(ctx(t), prefix, clientv3.WithPrefix(), clientv3.WithCountOnly())
	if err != nil {
		t.Fatalf("counting raw keys: %v", err)
	}
	return resp.Count
}

// compact compacts etcd up to its current revision and returns that revision.
func (e *Env) compact(t *testing.T) int64 {
	t.Helper()
	if e.Compact == nil {
		t.Fatal("storagetest: Env.Compact is required by this case")
	}
	rev := e.etcdRev(t)
	if err := e.Compact(ctx(t), rev); err != nil {
		t.Fatalf("compacting to %d: %v", rev, err)
	}
	return rev
}

// eventually polls cond until it returns true or waitTimeout passes; on
// timeout it fails t with the last reason cond gave.
func eventually(t *testing.T, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	delay := 10 * time.Millisecond
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s: %s", waitTimeout, what, why)
		}
		time.Sleep(delay)
		delay = min(2*delay, 200*time.Millisecond)
	}
}

// expectCode fails t unless err is a storage error with the sentinel's code.
func expectCode(t *testing.T, op string, err error, sentinel *storage.Error) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: got no error, want %v", op, sentinel.Code)
	}
	if !errors.Is(err, sentinel) {
		t.Fatalf("%s: got error %v (%T), want errors.Is %v", op, err, err, sentinel.Code)
	}
}

// expectOneOf fails t unless err matches one of the sentinels.
func expectOneOf(t *testing.T, op string, err error, sentinels ...*storage.Error) {
	t.Helper()
	for _, s := range sentinels {
		if errors.Is(err, s) {
			return
		}
	}
	var want []string
	for _, s := range sentinels {
		want = append(want, s.Code.String())
	}
	t.Fatalf("%s: got error %v, want one of %v", op, err, want)
}

// rvAt is the RV naming revision rv.
func rvAt(rv int64) storage.RV { return storage.RVAt(uint64(rv)) }

// contextWithCancel returns a cancellable context for one case.
func contextWithCancel(t *testing.T) (context.Context, context.CancelFunc) {
	c, cancel := context.WithCancel(ctx(t))
	t.Cleanup(cancel)
	return c, cancel
}

// checkListInvariants fails t when a list is not a state at its own RV:
// every item must be at or below the list's resourceVersion, and keys must
// be in order without duplicates.
func checkListInvariants(t *testing.T, list runtime.Object) {
	t.Helper()
	lrv := listRV(t, list)
	prev := ""
	for _, it := range items(t, list) {
		if rv := rvOf(t, it); rv > lrv {
			t.Fatalf("list at RV %d holds %s, written later", lrv, describe(it))
		}
		acc := accessor(t, it)
		k := acc.GetNamespace() + "/" + acc.GetName()
		if k <= prev {
			t.Fatalf("list items out of key order or duplicated: %s after %s", k, prev)
		}
		prev = k
	}
}
