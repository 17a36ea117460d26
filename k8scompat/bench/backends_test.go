package bench

import (
	"context"
	"log/slog"
	"os"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/kubernetes"
	"go.uber.org/zap"
	"k8s.io/apimachinery/pkg/api/apitesting"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apiserver/pkg/apis/example"
	examplev1 "k8s.io/apiserver/pkg/apis/example/v1"
	k8sstorage "k8s.io/apiserver/pkg/storage"
	k8scacher "k8s.io/apiserver/pkg/storage/cacher"
	k8setcd3 "k8s.io/apiserver/pkg/storage/etcd3"
	"k8s.io/apiserver/pkg/storage/value/encrypt/identity"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/k8scompat"
	lwstorage "github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/storage/etcd3"
	"github.com/listwatch/listwatch/watchcache"
)

var (
	scheme = runtime.NewScheme()
	codecs = serializer.NewCodecFactory(scheme)
	codec  runtime.Codec
)

func init() {
	metav1.AddToGroupVersion(scheme, metav1.SchemeGroupVersion)
	utilruntime.Must(example.AddToScheme(scheme))
	utilruntime.Must(examplev1.AddToScheme(scheme))
	codec = apitesting.TestCodec(codecs, examplev1.SchemeGroupVersion)
}

func newPod() runtime.Object     { return &example.Pod{} }
func newPodList() runtime.Object { return &example.PodList{} }

// backend builds one storage.Interface under test on a fresh etcd.
type backend struct {
	name string
	// cached is set for the caches (they get the indexed variants).
	cached bool
	new    func(b *testing.B, srv *embedtest.Server) k8sstorage.Interface
}

var backends = []backend{
	{name: "listwatch-etcd3", new: newListwatchEtcd3},
	{name: "listwatch-cacher", cached: true, new: newListwatchCacher},
	{name: "k8s-etcd3", new: newK8sEtcd3},
	{name: "k8s-cacher", cached: true, new: newK8sCacher},
}

// benchLog is the logger of listwatch's stores and caches in the
// benchmarks: warnings and errors on stderr, without the informational
// lines ("cacher: listed ...") that slog.Default would print among the
// benchmark results that cmd/benchtable echoes.
var benchLog = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))

func lwStore(b *testing.B, srv *embedtest.Server) *etcd3.Store {
	s, err := etcd3.New(etcd3.Config{Client: srv.Client, Codec: codec, NewFunc: newPod, NewListFunc: newPodList,
		ResourcePrefix: "/pods", Logger: benchLog})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.Close)
	return s
}

func adapter(b *testing.B, s lwstorage.Interface) k8sstorage.Interface {
	a, err := k8scompat.New(k8scompat.Config{Storage: s})
	if err != nil {
		b.Fatal(err)
	}
	return a
}

func newListwatchEtcd3(b *testing.B, srv *embedtest.Server) k8sstorage.Interface {
	return adapter(b, lwStore(b, srv))
}

// lwEncoded reports whether listwatch's cacher keeps its objects encoded
// (cacher.Config.Codec), asked for with K8SBENCH_LW_ENCODED=1.
func lwEncoded() bool { return envString("K8SBENCH_LW_ENCODED", "") == "1" }

// lwNoPacking reports whether listwatch's cacher keeps objects unpacked
// (cacher.Config.NoPacking), asked for with K8SBENCH_LW_NOPACK=1.
func lwNoPacking() bool { return envString("K8SBENCH_LW_NOPACK", "") == "1" }

func newListwatchCacher(b *testing.B, srv *embedtest.Server) k8sstorage.Interface {
	cfg := cacher.Config{Storage: lwStore(b, srv), ResourcePrefix: "/pods",
		NewFunc: newPod, NewListFunc: newPodList, GetAttrs: podAttrs,
		IndexFields: []string{"spec.nodeName", "metadata.namespace"}, NoPacking: lwNoPacking(), Logger: benchLog}
	if d, err := time.ParseDuration(envString("K8SBENCH_LW_COALESCE", "0s")); err == nil {
		cfg.WakeCoalesce = d
	}
	if lwEncoded() {
		cfg.Codec = watchcache.RuntimeCodec{Codec: codec, New: newPod, Versioner: lwstorage.APIObjectVersioner{}}
	}
	c, err := cacher.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	b.Cleanup(func() { cancel(); <-done })
	wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
	defer wcancel()
	if err := c.WaitReady(wctx); err != nil {
		b.Fatal(err)
	}
	return adapter(b, c)
}

func k8sEtcd3(b *testing.B, srv *embedtest.Server) k8sstorage.Interface {
	kc, err := kubernetes.New(clientv3.Config{Endpoints: srv.Endpoints, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { kc.Close() })
	compactor := k8setcd3.NewCompactor(kc.Client, 0, clock.RealClock{}, nil)
	b.Cleanup(compactor.Stop)
	versioner := k8sstorage.APIObjectVersioner{}
	s, err := k8setcd3.New(kc, compactor, codec, newPod, newPodList, "", "/pods/",
		schema.GroupResource{Resource: "pods"}, identity.NewEncryptCheckTransformer(),
		k8setcd3.NewDefaultLeaseManagerConfig(), k8setcd3.NewDefaultDecoder(codec, versioner), versioner)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.Close)
	return s
}

func newK8sEtcd3(b *testing.B, srv *embedtest.Server) k8sstorage.Interface { return k8sEtcd3(b, srv) }

func newK8sCacher(b *testing.B, srv *embedtest.Server) k8sstorage.Interface {
	store := k8sEtcd3(b, srv)
	indexers := cache.Indexers{
		"f:spec.nodeName":      func(obj any) ([]string, error) { return []string{obj.(*example.Pod).Spec.NodeName}, nil },
		"f:metadata.namespace": func(obj any) ([]string, error) { return []string{obj.(*example.Pod).Namespace}, nil },
	}
	c, err := k8scacher.NewCacherFromConfig(k8scacher.Config{
		Storage:             store,
		Versioner:           k8sstorage.APIObjectVersioner{},
		GroupResource:       schema.GroupResource{Resource: "pods"},
		EventsHistoryWindow: k8scacher.DefaultEventFreshDuration,
		ResourcePrefix:      "/pods/",
		KeyFunc:             func(obj runtime.Object) (string, error) { return k8sstorage.NamespaceKeyFunc("/pods/", obj) },
		GetAttrsFunc:        podAttrs,
		NewFunc:             newPod,
		NewListFunc:         newPodList,
		IndexerFuncs: k8sstorage.IndexerFuncs{"spec.nodeName": func(obj runtime.Object) string {
			return obj.(*example.Pod).Spec.NodeName
		}},
		Indexers: &indexers,
		Codec:    codec,
		Clock:    clock.RealClock{},
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Stop)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Wait(ctx); err != nil {
		b.Fatal(err)
	}
	d := k8scacher.NewCacheDelegator(c, store)
	b.Cleanup(d.Stop)
	return d
}

// podAttrs makes the fields Kubernetes' pod registry selects on available.
func podAttrs(obj runtime.Object) (labels.Set, fields.Set, error) {
	pod := obj.(*example.Pod)
	return labels.Set(pod.Labels), fields.Set{
		"metadata.name":      pod.Name,
		"metadata.namespace": pod.Namespace,
		"spec.nodeName":      pod.Spec.NodeName,
	}, nil
}
