package conformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/component-base/featuregate"
	featuregatetesting "k8s.io/component-base/featuregate/testing"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/apis/example"
	k8sstorage "k8s.io/apiserver/pkg/storage"
	storagetesting "k8s.io/apiserver/pkg/storage/testing"
	k8svalue "k8s.io/apiserver/pkg/storage/value"

	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/k8scompat"
)

// envSeq makes every env's etcd prefix unique, also across -count runs.
var envSeq atomic.Int64

// transformerPrefix is what Kubernetes' etcd3 tests prepend to stored values.
const transformerPrefix = "test!"

// env is one store under test with the hooks the upstream suite needs.
type env struct {
	ctx    context.Context
	srv    *embedtest.Server // the etcd this test runs on
	store  k8sstorage.Interface
	client *clientv3.Client // this test's client; KV is a KVRecorder
	kv     *storagetesting.KVRecorder
	lists  *storagetesting.KubernetesRecorder
	// etcdPrefix is prepended to every key in etcd.
	etcdPrefix  string
	transformer *swapTransformer
	codec       *failingCodec
	// cached is set when a cacher serves the reads.
	cached bool
}

func (e *env) newPod() runtime.Object     { return &example.Pod{} }
func (e *env) newPodList() runtime.Object { return &example.PodList{} }

// envOptions are what a suite case asks of the process its store runs in.
type envOptions struct {
	// gates are the feature gates the case sets for its duration, as
	// Kubernetes' own test of the same function does (the store reads them
	// when it is built, as Kubernetes' does); nothing else about the store
	// is configured per case.
	gates map[featuregate.Feature]bool
}

// newEtcdEnv builds the store for t on srv, below a prefix of its own, the
// one documented way: k8scompat.StorageDecorator with nothing but the etcd
// client configured, the registry's storage config holding the codec, the
// prefix and the transformer of Kubernetes' etcd3 tests, and the cacher
// turned off.
func newEtcdEnv(t *testing.T, srv *embedtest.Server, opts envOptions) *env {
	return newEnv(t, srv, opts, false)
}

func newEnv(t *testing.T, srv *embedtest.Server, opts envOptions, cached bool) *env {
	t.Helper()
	for f, on := range opts.gates {
		featuregatetesting.SetFeatureGateDuringTest(t, utilfeature.DefaultFeatureGate, f, on)
	}
	cli, err := embedtest.NewClient(srv.Endpoints)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	e := &env{
		ctx:         context.Background(),
		srv:         srv,
		client:      cli,
		lists:       storagetesting.NewKubernetesRecorder(nil),
		etcdPrefix:  fmt.Sprintf("%s-%d", strings.TrimSuffix(embedtest.Prefix(t), "/"), envSeq.Add(1)),
		transformer: newSwapTransformer(storagetesting.NewPrefixTransformer([]byte(transformerPrefix), false)),
		codec:       &failingCodec{Codec: codec},
		cached:      cached,
	}
	e.kv = storagetesting.NewKVRecorder(cli.KV, e.lists)
	cli.KV = e.kv
	rc := storagebackend.NewDefaultConfig(e.etcdPrefix, e.codec).ForResource(schema.GroupResource{Resource: "pods"})
	rc.Transformer = e.transformer
	rc.CompactionInterval = 0 // the tests compact themselves
	decorate := k8scompat.StorageDecorator(k8scompat.DecoratorConfig{
		Client: cli,
		Cache:  func(schema.GroupResource) bool { return cached },
	})
	s, destroy, err := decorate(rc, "/pods", podKey, e.newPod, e.newPodList, podAttrs,
		k8sstorage.IndexerFuncs{"spec.nodeName": func(runtime.Object) string { return "" }}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(destroy)
	e.store = s
	if cached {
		waitReady(t, s)
	}
	return e
}

// podKey is the key of a pod below /pods: /pods/<namespace>/<name>, or
// /pods/<name> for the suite's pods without a namespace.
func podKey(obj runtime.Object) (string, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return "", err
	}
	if m.GetNamespace() == "" {
		return "/pods/" + m.GetName(), nil
	}
	return k8sstorage.NamespaceKeyFunc("/pods/", obj)
}

// adapter returns the k8scompat.Store of e.
func (e *env) adapter() *k8scompat.Store { return e.store.(*k8scompat.Store) }

// compaction compacts etcd up to a revision the way Kubernetes' tests do with
// etcd3.Compact: it first records the target in the coordination key
// compact_rev_key (one write, so the revision advances by one, which the
// upstream tests count on), then compacts. Compacting below an already
// compacted revision is not an error.
func (e *env) compaction() storagetesting.Compaction {
	return func(ctx context.Context, t *testing.T, rv string) {
		n, err := e.store.Versioner().ParseResourceVersion(rv)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.srv.Client.Put(ctx, "compact_rev_key", rv); err != nil {
			t.Fatalf("recording the compaction target: %v", err)
		}
		if err := e.srv.Compact(ctx, int64(n)); err != nil && !errors.Is(err, rpctypes.ErrCompacted) {
			t.Fatalf("compacting to %d: %v", n, err)
		}
	}
}

// increaseRV writes a key outside every resource, as Kubernetes' tests do,
// and returns the new revision.
func (e *env) increaseRV() storagetesting.IncreaseRVFunc {
	return func(ctx context.Context, t *testing.T) int64 {
		resp, err := e.srv.Client.Put(ctx, "increaseRV", "ok")
		if err != nil {
			t.Fatalf("increaseRV: %v", err)
		}
		return resp.Header.Revision
	}
}

// keyValidation checks what is stored in etcd: the transformer's prefix,
// then an object that decodes and carries neither resourceVersion nor
// selfLink (Kubernetes' checkStorageInvariants).
func (e *env) keyValidation() storagetesting.KeyValidation {
	return func(ctx context.Context, t *testing.T, key string) {
		resp, err := e.srv.Client.Get(ctx, e.etcdPrefix+key)
		if err != nil {
			t.Fatalf("etcd get: %v", err)
		}
		if len(resp.Kvs) == 0 {
			t.Fatalf("nothing stored at %q", e.etcdPrefix+key)
		}
		data, ok := bytes.CutPrefix(resp.Kvs[0].Value, []byte(transformerPrefix))
		if !ok {
			t.Fatalf("stored value lacks the transformer prefix: %q", resp.Kvs[0].Value)
		}
		obj, err := runtime.Decode(codec, data)
		if err != nil {
			t.Fatalf("stored value does not decode: %v", err)
		}
		pod := obj.(*example.Pod)
		if pod.ResourceVersion != "" {
			t.Errorf("stored object has resourceVersion %q", pod.ResourceVersion)
		}
		if pod.SelfLink != "" {
			t.Errorf("stored object has selfLink %q", pod.SelfLink)
		}
	}
}

// callsValidation is Kubernetes' checkStorageCallsInvariants for its etcd3
// store: each page transforms exactly the objects it processes, and a
// filtered page is filled with exponentially growing etcd reads (capped at
// 10000 keys, listwatch's DefaultMaxListBatch as Kubernetes' maxLimit).
func (e *env) callsValidation() storagetesting.CallsValidation {
	const maxLimit = 10000
	return func(t *testing.T, pageSize, estimatedProcessedObjects uint64) {
		prefix := e.transformer.prefixTransformer()
		if reads := prefix.GetReadsAndReset(); reads != estimatedProcessedObjects {
			t.Errorf("unexpected transformer reads: %d, expected: %d", reads, estimatedProcessedObjects)
		}
		estimatedGetCalls := uint64(1)
		if pageSize != 0 {
			currLimit := pageSize
			for sum := uint64(1); sum < estimatedProcessedObjects; {
				currLimit *= 2
				if currLimit > maxLimit {
					currLimit = maxLimit
				}
				sum += currLimit
				estimatedGetCalls++
			}
		}
		if reads := e.kv.GetReadsAndReset() + e.kv.GetStreamReadsAndReset(); reads != estimatedGetCalls {
			t.Errorf("unexpected etcd reads: %d, want: %d", reads, estimatedGetCalls)
		}
	}
}

// swapTransformer is the transformer installed in the listwatch store (via
// k8scompat.Transformer); tests replace what it delegates to, which is how
// Kubernetes' tests swap the transformer of its etcd3 store.
type swapTransformer struct {
	cur  atomic.Pointer[transformerBox]
	fail atomic.Bool // TransformFromStorage fails while set
}

type transformerBox struct{ t k8svalue.Transformer }

func newSwapTransformer(t k8svalue.Transformer) *swapTransformer {
	s := &swapTransformer{}
	s.cur.Store(&transformerBox{t})
	return s
}

func (s *swapTransformer) get() k8svalue.Transformer { return s.cur.Load().t }

// prefixTransformer returns the current transformer when it is the
// upstream PrefixTransformer (the default), else a fresh one.
func (s *swapTransformer) prefixTransformer() *storagetesting.PrefixTransformer {
	if p, ok := s.get().(*storagetesting.PrefixTransformer); ok {
		return p
	}
	return storagetesting.NewPrefixTransformer([]byte(transformerPrefix), false)
}

func (s *swapTransformer) setFailing(f bool) { s.fail.Store(f) }

func (s *swapTransformer) TransformFromStorage(ctx context.Context, data []byte, dataCtx k8svalue.Context) ([]byte, bool, error) {
	if s.fail.Load() {
		return nil, false, errors.New("synthetic transformer error")
	}
	return s.get().TransformFromStorage(ctx, data, dataCtx)
}

func (s *swapTransformer) TransformToStorage(ctx context.Context, data []byte, dataCtx k8svalue.Context) ([]byte, error) {
	return s.get().TransformToStorage(ctx, data, dataCtx)
}

// failingCodec fails every Decode while fail is set.
type failingCodec struct {
	runtime.Codec
	fail atomic.Bool
}

func (c *failingCodec) setFailing(f bool) { c.fail.Store(f) }

func (c *failingCodec) Decode(data []byte, defaults *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	if c.fail.Load() {
		return nil, nil, errors.New("synthetic decode error")
	}
	return c.Codec.Decode(data, defaults, into)
}

// withPrefixTransformer is storagetesting.InterfaceWithPrefixTransformer:
// as Kubernetes' etcd3 tests do, it replaces the store's transformer with
// what the modifier makes of a copy of the prefix transformer.
type withPrefixTransformer struct {
	k8sstorage.Interface
	e *env
}

func (w withPrefixTransformer) UpdatePrefixTransformer(m storagetesting.PrefixTransformerModifier) func() {
	return w.e.setTransformer(m(storagetesting.NewPrefixTransformer([]byte(transformerPrefix), false)))
}

// withTransformerOverride is storagetesting.InterfaceWithTransformerOverride:
// as Kubernetes' etcd3 tests do, it replaces the store's transformer with
// what the modifier makes of it.
type withTransformerOverride struct {
	k8sstorage.Interface
	e *env
}

func (w withTransformerOverride) UpdateTransformer(m storagetesting.TransformerModifier) func() {
	return w.e.setTransformer(m(w.e.adapter().Transformer()))
}

// setTransformer replaces the store's transformer with t and returns the
// function that puts the old one back.
func (e *env) setTransformer(t k8svalue.Transformer) (revert func()) {
	a := e.adapter()
	old := a.Transformer()
	if err := a.SetTransformer(t); err != nil {
		panic(err)
	}
	return func() {
		if err := a.SetTransformer(old); err != nil {
			panic(err)
		}
	}
}

// watchCacheEnabled tells the upstream functions whether a watch cache
// serves the reads (which relaxes some of their expectations).
func (e *env) watchCacheEnabled() bool { return e.cached }

// callsValidationFor returns the etcd-call validation for the etcd store;
// for a cache, whose paginated lists do not map to etcd reads one to one,
// it checks nothing, as Kubernetes' cacher tests do.
func (e *env) callsValidationFor() storagetesting.CallsValidation {
	if e.cached {
		return func(*testing.T, uint64, uint64) {}
	}
	return e.callsValidation()
}

// createWaiting returns the store for the watch-list tests; over a cache its
// Create returns only once the cache serves the created object, as in
// Kubernetes' cacher tests (createWrapper).
func (e *env) createWaiting() k8sstorage.Interface {
	if !e.cached {
		return e.store
	}
	return &createWaiter{Interface: e.store}
}

// createWaiter waits after each Create until a Get with RV "0" (served by the
// cache) returns the created object.
type createWaiter struct {
	k8sstorage.Interface
}

func (c *createWaiter) Create(ctx context.Context, key string, obj, out runtime.Object, ttl uint64) error {
	if err := c.Interface.Create(ctx, key, obj, out, ttl); err != nil {
		return err
	}
	return wait.PollUntilContextTimeout(ctx, 10*time.Millisecond, wait.ForeverTestTimeout, true,
		func(ctx context.Context) (bool, error) {
			cur := &example.Pod{}
			err := c.Interface.Get(ctx, key, k8sstorage.GetOptions{ResourceVersion: "0"}, cur)
			if k8sstorage.IsNotFound(err) {
				return false, nil
			}
			if err != nil {
				return false, err
			}
			return apiequality.Semantic.DeepEqual(cur, out), nil
		})
}

// requestProgress calls RequestWatchProgress every 100 ms until t ends.
func requestProgress(t *testing.T, e *env) {
	ctx, cancel := context.WithCancel(e.ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if err := e.store.RequestWatchProgress(ctx); err != nil && ctx.Err() == nil {
					t.Errorf("RequestWatchProgress: %v", err)
					return
				}
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
}
