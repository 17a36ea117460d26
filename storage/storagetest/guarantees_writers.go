package storagetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/storage"
)

// guaranteeGroups are the values of the "grp" label writers set, so that
// label-selector watchers see objects move in and out of their selection.
var guaranteeGroups = []string{"g0", "g1", "g2", "g3"}

// rvLog collects the revisions of successful writes: the RVs watchers start from.
type rvLog struct {
	mu      sync.Mutex
	rvs     []uint64
	max     uint64
	writes  int // write attempts finished, successful or not
	changed chan struct{}
}

func newRVLog(initial uint64) *rvLog {
	return &rvLog{rvs: []uint64{initial}, max: initial, changed: make(chan struct{})}
}

func (l *rvLog) record(rv uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writes++
	if rv > 0 {
		l.rvs = append(l.rvs, rv)
		l.max = max(l.max, rv)
	}
	close(l.changed)
	l.changed = make(chan struct{})
}

// waitWrites blocks until n write attempts have finished or ctx is done.
func (l *rvLog) waitWrites(ctx context.Context, n int) bool {
	for {
		l.mu.Lock()
		w, ch := l.writes, l.changed
		l.mu.Unlock()
		if w >= n {
			return true
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return false
		}
	}
}

// pick returns a random recorded RV in [lo, hi], or false if there is none;
// with recent, it picks among the latest quarter more often than not.
func (l *rvLog) pick(rng *rand.Rand, lo, hi uint64, recent bool) (uint64, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var c []uint64
	for _, rv := range l.rvs {
		if rv >= lo && rv <= hi {
			c = append(c, rv)
		}
	}
	if len(c) == 0 {
		return 0, false
	}
	if recent && rng.IntN(10) < 7 {
		// Mostly recent RVs: a watcher from the start of the history costs
		// the store (and the shared CI machine) the most.
		c = c[len(c)-max(1, len(c)/4):]
	}
	return c[rng.IntN(len(c))], true
}

// sorted returns the recorded RVs in ascending order.
func (l *rvLog) sorted() []uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	s := slices.Clone(l.rvs)
	slices.Sort(s)
	return s
}

// writer makes random writes through the store and as raw transactions.
type writer struct {
	env  GuaranteeEnv
	rng  *rand.Rand
	seq  func() string
	keys [][2]string // namespace, name
	log  *rvLog
}

func guaranteeKeys(n int) [][2]string {
	keys := make([][2]string, 0, n)
	for i := range n {
		ns := "ns-a"
		if i%2 == 1 {
			ns = "ns-b"
		}
		keys = append(keys, [2]string{ns, "obj-" + strconv.Itoa(i/2)})
	}
	return keys
}

// step makes one random write and returns its revision (0 if nothing was
// written, such as a create of an existing key).
func (w *writer) step(ctx context.Context) (uint64, error) {
	k := w.keys[w.rng.IntN(len(w.keys))]
	switch p := w.rng.IntN(100); {
	case p < 20:
		return w.create(ctx, k)
	case p < 55:
		return w.update(ctx, k)
	case p < 70:
		return w.delete(ctx, k)
	default:
		return w.txn(ctx)
	}
}

// mutate sets a random group label and a fresh seq annotation on obj.
func (w *writer) mutate(obj runtime.Object) error {
	acc, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	l := acc.GetLabels()
	if l == nil {
		l = map[string]string{}
	}
	l["grp"] = guaranteeGroups[w.rng.IntN(len(guaranteeGroups))]
	acc.SetLabels(l)
	a := acc.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[seqAnnotation] = w.seq()
	acc.SetAnnotations(a)
	return nil
}

func (w *writer) rvOf(obj runtime.Object) uint64 {
	rv, _ := w.env.Store.Versioner().ObjectResourceVersion(obj)
	return rv
}

func (w *writer) create(ctx context.Context, k [2]string) (uint64, error) {
	obj, err := w.env.newObject(k[0], k[1])
	if err != nil {
		return 0, err
	}
	if err := w.mutate(obj); err != nil {
		return 0, err
	}
	out := w.env.NewFunc()
	err = w.env.Store.Create(ctx, w.env.storageKey(k[0], k[1]), obj, out, 0)
	if errors.Is(err, storage.ErrKeyExists) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("create %v: %w", k, err)
	}
	return w.rvOf(out), nil
}

func (w *writer) update(ctx context.Context, k [2]string) (uint64, error) {
	out := w.env.NewFunc()
	err := w.env.Store.GuaranteedUpdate(ctx, w.env.storageKey(k[0], k[1]), out, false, nil,
		func(in runtime.Object, _ storage.ResponseMeta) (runtime.Object, *uint64, error) {
			o := in.DeepCopyObject()
			return o, nil, w.mutate(o)
		}, nil, storage.UpdateOptions{})
	if errors.Is(err, storage.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("update %v: %w", k, err)
	}
	return w.rvOf(out), nil
}

func (w *writer) delete(ctx context.Context, k [2]string) (uint64, error) {
	out := w.env.NewFunc()
	err := w.env.Store.Delete(ctx, w.env.storageKey(k[0], k[1]), out, nil, storage.ValidateAllObjectFunc, nil,
		storage.DeleteOptions{})
	if errors.Is(err, storage.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("delete %v: %w", k, err)
	}
	return w.rvOf(out), nil
}

// txn writes 2-4 keys in one etcd transaction on the raw client: creates
// for absent keys, updates or deletes for present ones, guarded by their mod
// revisions. A lost race writes nothing.
func (w *writer) txn(ctx context.Context) (uint64, error) {
	n := 2 + w.rng.IntN(3)
	idx := w.rng.Perm(len(w.keys))[:n]
	etcdKeys := make([]string, n)
	gets := make([]clientv3.Op, n)
	for i, j := range idx {
		etcdKeys[i] = w.env.etcdKey(w.env.storageKey(w.keys[j][0], w.keys[j][1]))
		gets[i] = clientv3.OpGet(etcdKeys[i])
	}
	cur, err := w.env.Client.Txn(ctx).Then(gets...).Commit()
	if err != nil {
		return 0, fmt.Errorf("txn read: %w", err)
	}
	var conds []clientv3.Cmp
	var ops []clientv3.Op
	for i, j := range idx {
		kvs := cur.Responses[i].GetResponseRange().Kvs
		var modRev int64
		var obj runtime.Object
		if len(kvs) == 1 {
			modRev = kvs[0].ModRevision
			if w.rng.IntN(10) < 4 {
				conds = append(conds, clientv3.Compare(clientv3.ModRevision(etcdKeys[i]), "=", modRev))
				ops = append(ops, clientv3.OpDelete(etcdKeys[i]))
				continue
			}
			if obj, _, err = w.env.Codec.Decode(kvs[0].Value, nil, w.env.NewFunc()); err != nil {
				return 0, fmt.Errorf("txn decode %s: %w", etcdKeys[i], err)
			}
		} else if obj, err = w.env.newObject(w.keys[j][0], w.keys[j][1]); err != nil {
			return 0, err
		}
		data, err := w.encode(obj)
		if err != nil {
			return 0, err
		}
		conds = append(conds, clientv3.Compare(clientv3.ModRevision(etcdKeys[i]), "=", modRev))
		ops = append(ops, clientv3.OpPut(etcdKeys[i], string(data)))
	}
	resp, err := w.env.Client.Txn(ctx).If(conds...).Then(ops...).Commit()
	if err != nil {
		return 0, fmt.Errorf("txn: %w", err)
	}
	if !resp.Succeeded {
		return 0, nil
	}
	return uint64(resp.Header.Revision), nil
}

func (w *writer) encode(obj runtime.Object) ([]byte, error) {
	if err := w.mutate(obj); err != nil {
		return nil, err
	}
	if err := w.env.Store.Versioner().PrepareObjectForStorage(obj); err != nil {
		return nil, err
	}
	return runtime.Encode(w.env.Codec, obj)
}
