package conformance

import (
	"fmt"
	"os"
	"sync"
	"testing"

	"go.uber.org/goleak"
	"k8s.io/apimachinery/pkg/api/apitesting"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/apiserver/pkg/apis/example"
	examplev1 "k8s.io/apiserver/pkg/apis/example/v1"

	"github.com/listwatch/listwatch/embedtest"
)

// etcd is the one embedded etcd shared by every test of the package (see
// sharedEtcd); each test gets its own key prefix (and its own client, so
// that call counters see only that test's requests).
var (
	etcd     *embedtest.Server
	etcdErr  error
	etcdOnce sync.Once
)

// sharedEtcd starts the shared etcd on first use. It is started from a test
// rather than before m.Run because testing.M.Run reassigns os.Stderr (with
// -json), which races with the etcd server goroutines reading it.
func sharedEtcd(t testing.TB) *embedtest.Server {
	etcdOnce.Do(func() { etcd, etcdErr = embedtest.StartServer(embedtest.Options{}) })
	if etcdErr != nil {
		t.Fatalf("starting the shared etcd: %v", etcdErr)
	}
	return etcd
}

var (
	scheme = runtime.NewScheme()
	codecs = serializer.NewCodecFactory(scheme)
	// codec is the codec Kubernetes' etcd3 tests store Pods with.
	codec runtime.Codec
)

func init() {
	metav1.AddToGroupVersion(scheme, metav1.SchemeGroupVersion)
	utilruntime.Must(example.AddToScheme(scheme))
	utilruntime.Must(examplev1.AddToScheme(scheme))
	codec = apitesting.TestCodec(codecs, examplev1.SchemeGroupVersion)
}

func TestMain(m *testing.M) {
	code := m.Run()
	if etcd != nil {
		etcd.Close()
	}
	if code == 0 {
		if err := goleak.Find(leakOptions()...); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// leakOptions ignores goroutines that k8s.io libraries start once per
// process and never stop.
func leakOptions() []goleak.Option {
	return []goleak.Option{
		goleak.IgnoreTopFunction("k8s.io/klog/v2.(*flushDaemon).run.func1"),
		goleak.IgnoreAnyFunction("k8s.io/apimachinery/pkg/util/wait.BackoffUntilWithContext.func1"),
		goleak.IgnoreTopFunction("k8s.io/apimachinery/pkg/watch.(*Broadcaster).loop"),
	}
}
