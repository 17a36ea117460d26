package server

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	goruntime "runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/storage/etcd3"
)

// benchObject is object i of the shared workload (bench/WORKLOAD.md):
// namespace bench, name obj-%05d, ~1 KiB encoded, labels app and tier,
// field spec.nodeName.
func benchObject(i int) *unstructured.Unstructured {
	u := widget.NewUnstructuredWidget("bench", fmt.Sprintf("obj-%05d", i), map[string]string{
		"app": fmt.Sprintf("app-%d", i%10), "tier": fmt.Sprintf("tier-%d", (i/10)%10)})
	u.SetAnnotations(map[string]string{"bench/padding": strings.Repeat("x", 760)})
	u.SetUID(types.UID(fmt.Sprintf("00000000-0000-0000-0000-%012d", i)))
	u.Object["spec"] = map[string]any{"nodeName": fmt.Sprintf("node-%d", i%100), "replicas": int64(0)}
	return u
}

// benchEnv is a server over a cacher over etcd3 holding n workload
// objects, plus the same keys served straight from etcd3 as "rawwidgets".
type benchEnv struct {
	store  *etcd3.Store
	cache  *cacher.Cacher
	srv    *Server
	ts     *httptest.Server
	client *http.Client
	stop   func()
	// cacheHeap is the live heap the cacher added while it loaded.
	cacheHeap int64
}

// liveHeap returns the heap in use after two garbage collections.
func liveHeap() int64 {
	goruntime.GC()
	goruntime.GC()
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

func newBenchEnv(b *testing.B, n int, mods ...func(*cacher.Config)) *benchEnv {
	b.Helper()
	ctx := context.Background()
	prefix := embedtest.Prefix(b)
	loadObjects(b, prefix, n)
	st, err := etcd3.New(etcd3.Config{
		Client: etcdServer.Client, Codec: widget.UnstructuredCodec,
		NewFunc: widget.NewUnstructured, NewListFunc: widget.NewUnstructuredList,
		Prefix: prefix, ResourcePrefix: "/widgets",
	})
	if err != nil {
		b.Fatal(err)
	}
	cc := cacher.Config{Storage: st, ResourcePrefix: "/widgets",
		NewFunc: widget.NewUnstructured, NewListFunc: widget.NewUnstructuredList, GetAttrs: widget.GetAttrs}
	for _, m := range mods {
		m(&cc)
	}
	before := liveHeap()
	c, err := cacher.New(cc)
	if err != nil {
		b.Fatal(err)
	}
	runCtx, cancel := context.WithCancel(ctx)
	ran := make(chan struct{})
	go func() {
		defer close(ran)
		_ = c.Run(runCtx)
	}()
	wctx, wcancel := context.WithTimeout(ctx, 2*time.Minute)
	defer wcancel()
	if err := c.WaitReady(wctx); err != nil {
		b.Fatal(err)
	}
	cacheHeap := liveHeap() - before
	cached := widgets(c)
	raw := widgets(st)
	raw.Plural = "rawwidgets"
	srv, err := New(Config{Resources: []Resource{cached, raw}, MaxWatches: -1}) // one user, past any sane cap
	if err != nil {
		b.Fatal(err)
	}
	e := &benchEnv{store: st, cache: c, srv: srv, ts: httptest.NewServer(srv),
		client: newBenchClient(), cacheHeap: cacheHeap}
	e.stop = func() {
		srv.Close()
		e.ts.Close()
		e.client.CloseIdleConnections()
		cancel()
		<-ran
		st.Close()
	}
	b.Cleanup(e.stop)
	return e
}

// loadObjects writes n workload objects below prefix with batched
// transactions (much faster than one Create each).
func loadObjects(b *testing.B, prefix string, n int) {
	b.Helper()
	ctx := context.Background()
	const batch = 128
	ops := make([]clientv3.Op, 0, batch)
	flush := func() {
		if len(ops) == 0 {
			return
		}
		if _, err := etcdServer.Client.Txn(ctx).Then(ops...).Commit(); err != nil {
			b.Fatal(err)
		}
		ops = ops[:0]
	}
	for i := range n {
		data, err := runtime.Encode(widget.UnstructuredCodec, benchObject(i))
		if err != nil {
			b.Fatal(err)
		}
		ops = append(ops, clientv3.OpPut(fmt.Sprintf("%swidgets/bench/obj-%05d", prefix, i), string(data)))
		if len(ops) == batch {
			flush()
		}
	}
	flush()
}

// envInts reads a comma-separated list of integers from env, or def.
func envInts(b *testing.B, env string, def ...int) []int {
	s := os.Getenv(env)
	if s == "" {
		return def
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			b.Fatalf("%s: %v", env, err)
		}
		out = append(out, v)
	}
	return out
}

var _ storage.Interface = (*cacher.Cacher)(nil)

// newBenchClient is an HTTP client that keeps many connections.
func newBenchClient() *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1000}}
}
