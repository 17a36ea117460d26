package k8scompat_test

import (
	"bytes"
	"context"
	"crypto/aes"
	"strings"
	"testing"
	"time"

	"github.com/listwatch/listwatch/embedtest"
	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/goleak"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apiserver/pkg/apis/example"
	examplev1 "k8s.io/apiserver/pkg/apis/example/v1"
	"k8s.io/apiserver/pkg/server/healthz"
	"k8s.io/apiserver/pkg/server/options/encryptionconfig"
	k8sstorage "k8s.io/apiserver/pkg/storage"
	"k8s.io/apiserver/pkg/storage/storagebackend"
	k8svalue "k8s.io/apiserver/pkg/storage/value"
	aestransformer "k8s.io/apiserver/pkg/storage/value/encrypt/aes"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/k8scompat"
)

var (
	scheme = runtime.NewScheme()
	codecs = serializer.NewCodecFactory(scheme)
	podGR  = schema.GroupResource{Resource: "pods"}
)

func init() {
	metav1.AddToGroupVersion(scheme, metav1.SchemeGroupVersion)
	utilruntime.Must(example.AddToScheme(scheme))
	utilruntime.Must(examplev1.AddToScheme(scheme))
}

// podStorage builds the pods' storage with the decorator of cfg below a
// prefix of t's own, the registry's way; the storage is destroyed when t ends.
func podStorage(t *testing.T, cfg k8scompat.DecoratorConfig, transformer k8svalue.Transformer) (*k8scompat.Store, string) {
	t.Helper()
	prefix := strings.TrimSuffix(embedtest.Prefix(t), "/")
	sc := storagebackend.NewDefaultConfig(prefix, codecs.LegacyCodec(examplev1.SchemeGroupVersion))
	rc := sc.ForResource(podGR)
	rc.Transformer = transformer
	rc.CompactionInterval = 0
	if cfg.Client == nil {
		cfg.Client = etcd.Client
	}
	s, destroy, err := k8scompat.StorageDecorator(cfg)(rc, "/pods",
		func(obj runtime.Object) (string, error) { return k8sstorage.NamespaceKeyFunc("/pods/", obj) },
		func() runtime.Object { return &example.Pod{} }, func() runtime.Object { return &example.PodList{} },
		k8sstorage.DefaultNamespaceScopedAttr, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(destroy)
	if c, ok := s.(*k8scompat.Store).Unwrap().(*cacher.Cacher); ok {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := c.WaitReady(ctx); err != nil {
			t.Fatal(err)
		}
	}
	return s.(*k8scompat.Store), prefix
}

func newPod(name string) *example.Pod {
	return &example.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// TestStorageDecoratorNoTransformer: a registry without encryption configured
// (a nil transformer) stores objects as they are.
func TestStorageDecoratorNoTransformer(t *testing.T) {
	for _, cached := range []bool{false, true} {
		t.Run(map[bool]string{false: "etcd", true: "cached"}[cached], func(t *testing.T) { noTransformer(t, cached) })
	}
}

func noTransformer(t *testing.T, cached bool) {
	ctx := ctxT(t)
	{
		s, prefix := podStorage(t, k8scompat.DecoratorConfig{Cache: func(schema.GroupResource) bool { return cached }}, nil)
		out := &example.Pod{}
		if err := s.Create(ctx, "/pods/ns/a", newPod("a"), out, 0); err != nil {
			t.Fatalf("cached=%v: Create: %v", cached, err)
		}
		got := &example.Pod{}
		if err := s.Get(ctx, "/pods/ns/a", k8sstorage.GetOptions{}, got); err != nil || got.Name != "a" {
			t.Fatalf("cached=%v: Get: %v, %v", cached, got.Name, err)
		}
		resp, err := etcd.Client.Get(ctx, prefix+"/pods/ns/a")
		if err != nil || len(resp.Kvs) != 1 || !bytes.HasPrefix(resp.Kvs[0].Value, []byte("{")) {
			t.Fatalf("cached=%v: stored value is not the plain JSON: %v %v", cached, resp, err)
		}
	}
}

// TestStorageDecoratorDestroy: the destroy function stops every goroutine
// the storage started (cacher, watches, compactor), also with a watch open.
func TestStorageDecoratorDestroy(t *testing.T) {
	ctx := ctxT(t)
	before := goleak.IgnoreCurrent()
	prefix := strings.TrimSuffix(embedtest.Prefix(t), "/")
	rc := storagebackend.NewDefaultConfig(prefix, codecs.LegacyCodec(examplev1.SchemeGroupVersion)).ForResource(podGR)
	rc.CompactionInterval = time.Hour
	reg := prometheus.NewRegistry()
	decorate := k8scompat.StorageDecorator(k8scompat.DecoratorConfig{Client: etcd.Client, Registerer: reg})
	s, destroy, err := decorate(rc, "/pods",
		func(obj runtime.Object) (string, error) { return k8sstorage.NamespaceKeyFunc("/pods/", obj) },
		func() runtime.Object { return &example.Pod{} }, func() runtime.Object { return &example.PodList{} },
		k8sstorage.DefaultNamespaceScopedAttr, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.(*k8scompat.Store).Unwrap().(*cacher.Cacher); !ok {
		t.Fatalf("the default serves from a cacher, got %T", s.(*k8scompat.Store).Unwrap())
	}
	w, err := s.Watch(ctx, "/pods", k8sstorage.ListOptions{ResourceVersion: "", Recursive: true, Predicate: k8sstorage.Everything})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if err := s.Create(ctx, "/pods/ns/a", newPod("a"), &example.Pod{}, 0); err != nil {
		t.Fatal(err)
	}
	if ev := <-w.ResultChan(); ev.Type != "ADDED" {
		t.Fatalf("first event %v", ev.Type)
	}
	mfs, err := reg.Gather()
	if err != nil || len(mfs) == 0 {
		t.Fatalf("no cacher metrics registered: %v", err)
	}
	destroy()
	destroy() // a second call does nothing
	if mfs, _ := reg.Gather(); len(mfs) != 0 {
		t.Errorf("%d metric families still registered after destroy", len(mfs))
	}
	goleak.VerifyNone(t, before)
}

// TestStorageDecoratorEncryptionReload: Kubernetes' dynamic encryption
// transformers, reloaded in place as an encryption-config reload does,
// without telling the storage: new writes use the new key, values under the
// old key still read while the config has it and are rewritten by their
// next update, the cache keeps serving, and a value whose key is gone fails
// to read from etcd with an internal error (Kubernetes' classification of a
// plain transformer error).
func TestStorageDecoratorEncryptionReload(t *testing.T) {
	ctx := ctxT(t)
	key1, key2 := gcmPrefix(t, "key1", 1), gcmPrefix(t, "key2", 2)
	dyn := encryptionconfig.NewDynamicTransformers(
		map[schema.GroupResource]k8svalue.Transformer{podGR: k8svalue.NewPrefixTransformers(nil, key1)},
		healthz.PingHealthz, func() {}, 0)
	s, prefix := podStorage(t, k8scompat.DecoratorConfig{}, dyn.TransformerForResource(podGR))
	stored := func(name string) []byte {
		t.Helper()
		resp, err := etcd.Client.Get(ctx, prefix+"/pods/ns/"+name)
		if err != nil || len(resp.Kvs) != 1 {
			t.Fatalf("etcd get %s: %v %v", name, resp, err)
		}
		return resp.Kvs[0].Value
	}
	for _, n := range []string{"a", "d"} {
		if err := s.Create(ctx, "/pods/ns/"+n, newPod(n), &example.Pod{}, 0); err != nil {
			t.Fatal(err)
		}
	}
	if v := stored("a"); !bytes.HasPrefix(v, key1.Prefix) {
		t.Fatalf("a not stored with key1: %q", v[:20])
	}

	// Reload: key2 writes, key1 still reads.
	dyn.Set(map[schema.GroupResource]k8svalue.Transformer{podGR: k8svalue.NewPrefixTransformers(nil, key2, key1)},
		func() {}, healthz.PingHealthz, 0)
	if err := s.Create(ctx, "/pods/ns/b", newPod("b"), &example.Pod{}, 0); err != nil {
		t.Fatal(err)
	}
	if v := stored("b"); !bytes.HasPrefix(v, key2.Prefix) {
		t.Fatalf("b not stored with key2 after the reload: %q", v[:20])
	}
	got := &example.Pod{}
	if err := s.Get(ctx, "/pods/ns/a", k8sstorage.GetOptions{}, got); err != nil {
		t.Fatalf("reading a (key1) after the reload: %v", err)
	}
	err := s.GuaranteedUpdate(ctx, "/pods/ns/a", &example.Pod{}, false, nil,
		func(in runtime.Object, _ k8sstorage.ResponseMeta) (runtime.Object, *uint64, error) {
			return in, nil, nil
		}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if v := stored("a"); !bytes.HasPrefix(v, key2.Prefix) {
		t.Fatalf("a (stale) not rewritten with key2 by a no-op update: %q", v[:20])
	}

	// Reload without key1: d, still under key1, is unreadable in etcd.
	dyn.Set(map[schema.GroupResource]k8svalue.Transformer{podGR: k8svalue.NewPrefixTransformers(nil, key2)},
		func() {}, healthz.PingHealthz, 0)
	err = s.Get(ctx, "/pods/ns/d", k8sstorage.GetOptions{}, &example.Pod{})
	if !k8sstorage.IsInternalError(err) {
		t.Fatalf("reading d (key1 gone) from etcd: got %v, want an internal error, as from Kubernetes' etcd3 store", err)
	}
	list := &example.PodList{}
	if err := s.GetList(ctx, "/pods", k8sstorage.ListOptions{ResourceVersion: "0", Recursive: true, Predicate: k8sstorage.Everything}, list); err != nil || len(list.Items) != 3 {
		t.Fatalf("the cache should keep serving its 3 objects: %d, %v", len(list.Items), err)
	}
}

func gcmPrefix(t *testing.T, name string, seed byte) k8svalue.PrefixTransformer {
	t.Helper()
	block, err := aes.NewCipher(bytes.Repeat([]byte{seed}, 32))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := aestransformer.NewGCMTransformer(block)
	if err != nil {
		t.Fatal(err)
	}
	return k8svalue.PrefixTransformer{Prefix: []byte("k8s:enc:aesgcm:v1:" + name + ":"), Transformer: tr}
}
