package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	apiruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"

	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/apiserver/apis/widgets"
	widgetsv1 "github.com/listwatch/listwatch/examples/apiserver/apis/widgets/v1"
	"github.com/listwatch/listwatch/examples/apiserver/server"
)

const (
	widgetsPath = "/apis/widgets.listwatch.dev/v1/namespaces/%s/widgets"
	etcdKey     = "/registry/widgets.listwatch.dev/widgets/%s/%s"
	sentAnno    = "bench.listwatch.dev/sent"
)

// running is one widget apiserver in this process.
type running struct {
	kind server.Storage
	cfg  *rest.Config
	stop func()

	mu      sync.Mutex
	clients []*rest.RESTClient // made by client; their connections closed by stop

	// dials counts the connections the clients dialed; h1 and h2 count
	// the responses they received over HTTP/1.1 and over HTTP/2.
	dials, h1, h2 atomic.Int64
}

func startServer(b *testing.B, kind server.Storage, endpoints []string) *running {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	s, err := server.New(server.Options{EtcdServers: endpoints, Listener: ln, CertDir: b.TempDir(), Storage: kind,
		Logger: serverLogger()})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	cfg := s.LoopbackConfig()
	cfg.QPS, cfg.Burst = -1, 0
	cfg.NegotiatedSerializer = server.Codecs.WithoutConversion()
	rc, err := rest.UnversionedRESTClientFor(cfg)
	if err != nil {
		b.Fatal(err)
	}
	for deadline := time.Now().Add(60 * time.Second); ; {
		ctx, c := context.WithTimeout(context.Background(), 2*time.Second)
		err := rc.Get().AbsPath("/readyz").Do(ctx).Error()
		c()
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("server not ready: %v", err)
		}
		time.Sleep(50 * time.Millisecond) // polling an HTTP endpoint
	}
	r := &running{kind: kind, cfg: cfg}
	r.stop = func() {
		// Close the clients' idle connections first: the server's
		// graceful shutdown otherwise waits for them until its timeout.
		r.mu.Lock()
		for _, c := range r.clients {
			c.Client.CloseIdleConnections()
		}
		r.clients = nil
		r.mu.Unlock()
		cancel()
		if err := <-done; err != nil {
			b.Logf("server: %v", err)
		}
	}
	return r
}

// serverLogger is the servers' logger: discarding, unless
// -apiserver.serverlog asks for warnings and errors on stderr.
func serverLogger() *slog.Logger {
	if *flagServerLog {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// client returns a client with a connection of its own, established: client-go shares
// one transport (so one HTTP/2 connection, up to its stream limit) among
// clients of equal configuration, which would put the writer's requests
// behind the watchers' flow-controlled streams; a dial function of its own
// keeps a client out of that cache.
func (r *running) client(b *testing.B) *rest.RESTClient {
	return r.clientWith(b, protoH2, nil)
}

// clientFor is client speaking proto.
func (r *running) clientFor(b *testing.B, proto protocol) *rest.RESTClient {
	return r.clientWith(b, proto, nil)
}

// clientWith is client speaking proto with its transport wrapped by wrap
// (nil: none). Over HTTP/2 its requests share one connection; over
// HTTP/1.1 each concurrent request (each watch) has a connection of its
// own.
func (r *running) clientWith(b *testing.B, proto protocol, wrap transport.WrapperFunc) *rest.RESTClient {
	cfg := rest.CopyConfig(r.cfg)
	dialer := &net.Dialer{Timeout: 10 * time.Second}
	cfg.Dial = func(ctx context.Context, network, address string) (net.Conn, error) {
		r.dials.Add(1)
		return dialer.DialContext(ctx, network, address)
	}
	if proto == protoH1 {
		// ALPN without h2: client-go then leaves HTTP/2 off the transport.
		cfg.TLSClientConfig.NextProtos = []string{"http/1.1"}
	}
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		rt = protoCounter{next: rt, r: r}
		if wrap != nil {
			rt = wrap(rt)
		}
		return rt
	}
	rc, err := rest.UnversionedRESTClientFor(cfg)
	if err != nil {
		b.Fatal(err)
	}
	r.mu.Lock()
	r.clients = append(r.clients, rc)
	r.mu.Unlock()
	// One request first, so that the connection exists before the many
	// concurrent watches that follow (over HTTP/2 each would otherwise
	// dial and handshake a connection of its own).
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := rc.Get().AbsPath("/readyz").Do(ctx).Error(); err != nil {
		b.Fatalf("client: %v", err)
	}
	return rc
}

// protoCounter counts the responses by HTTP version.
type protoCounter struct {
	next http.RoundTripper
	r    *running
}

func (t protoCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.next.RoundTrip(req)
	if err == nil {
		if resp.ProtoMajor == 2 {
			t.r.h2.Add(1)
		} else {
			t.r.h1.Add(1)
		}
	}
	return resp, err
}

// putWidgets writes n widgets named w-<i> straight into etcd, encoded as
// the server stores them.
func putWidgets(b *testing.B, cli *clientv3.Client, ns string, n int) {
	b.Helper()
	codec := server.Codecs.LegacyCodec(widgetsv1.SchemeGroupVersion)
	ctx := context.Background()
	var ops []clientv3.Op
	flush := func() {
		if len(ops) == 0 {
			return
		}
		if _, err := cli.Txn(ctx).Then(ops...).Commit(); err != nil {
			b.Fatal(err)
		}
		ops = ops[:0]
	}
	for i := range n {
		name := fmt.Sprintf("w-%06d", i)
		w := &widgets.Widget{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(fmt.Sprintf("uid-%s-%d", ns, i)),
				Labels:            map[string]string{"app": "bench", "shard": strconv.Itoa(i % 10)},
				CreationTimestamp: metav1.Now()},
			Spec:   widgets.WidgetSpec{Size: int32(i), Color: "blue"},
			Status: widgets.WidgetStatus{Phase: "Ready"},
		}
		data, err := apiruntime.Encode(codec, w)
		if err != nil {
			b.Fatal(err)
		}
		ops = append(ops, clientv3.OpPut(fmt.Sprintf(etcdKey, ns, name), string(data)))
		if len(ops) == 128 {
			flush()
		}
	}
	flush()
}

// listOnce lists ns at rv and returns the number of bytes read.
func listOnce(ctx context.Context, rc *rest.RESTClient, ns, rv string) (int, error) {
	req := rc.Get().AbsPath(fmt.Sprintf(widgetsPath, ns))
	if rv != "" {
		req = req.Param("resourceVersion", rv)
	}
	body, err := req.DoRaw(ctx)
	return len(body), err
}

// countItems lists ns at RV "0" and counts its items (by their uid).
func countItems(ctx context.Context, rc *rest.RESTClient, ns string) (int, error) {
	body, err := rc.Get().AbsPath(fmt.Sprintf(widgetsPath, ns)).Param("resourceVersion", "0").DoRaw(ctx)
	return bytes.Count(body, []byte(`"uid":`)), err
}

// heapInUse returns the live heap once it has settled: collections 200 ms
// apart until two agree within 1% (at most 10 s), so that what a server
// stopped earlier in the run left to finish is gone first.
func heapInUse() uint64 {
	var last uint64
	for deadline := time.Now().Add(10 * time.Second); ; {
		runtime.GC()
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		cur := m.HeapAlloc
		if last != 0 && (cur <= last && last-cur < last/100 || cur > last && cur-last < last/100) || time.Now().After(deadline) {
			return cur
		}
		last = cur
		time.Sleep(200 * time.Millisecond) // letting finished work be released: nothing to wait on
	}
}

// latencies collects event latencies from many goroutines.
type latencies struct {
	mu sync.Mutex
	d  []time.Duration
}

func (l *latencies) add(d []time.Duration) {
	l.mu.Lock()
	l.d = append(l.d, d...)
	l.mu.Unlock()
}

func (l *latencies) quantile(q float64) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.d) == 0 {
		return 0
	}
	slices.Sort(l.d)
	return l.d[int(q*float64(len(l.d)-1))]
}

// watcher reads one HTTPS watch of ns as raw JSON lines, counting events
// and timing those that carry the writer's send time.
type watcher struct {
	events  atomic.Int64
	lastRV  atomic.Value // string
	gone    atomic.Bool  // the watch ended with 410 Gone
	refused atomic.Bool  // the watch was not established
	ended   atomic.Bool  // the established watch ended before ctx did
	stopped atomic.Bool  // run returned
	err     atomic.Value // error: why it was refused or ended
}

var (
	sentKey = []byte(`"` + sentAnno + `":"`)
	rvKey   = []byte(`"resourceVersion":"`)
)

func (w *watcher) refuse(err error) {
	w.err.Store(err)
	w.refused.Store(true)
}

func (w *watcher) end(err error) {
	w.err.Store(err)
	w.ended.Store(true)
}

// run watches ns from rv until ctx ends or the stream closes. The watch
// must be established by openBy, or it is refused; opened is called once
// it is established or refused.
func (w *watcher) run(ctx context.Context, rc *rest.RESTClient, ns, rv string, lat *latencies, openBy time.Time, opened func()) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	late := time.AfterFunc(time.Until(openBy), cancel)
	stream, err := rc.Get().AbsPath(fmt.Sprintf(widgetsPath, ns)).Param("watch", "1").
		Param("resourceVersion", rv).Param("allowWatchBookmarks", "true").Stream(ctx)
	if !late.Stop() && err == nil {
		stream.Close()
		err = fmt.Errorf("not established by its deadline")
	}
	if err != nil {
		w.refuse(err)
		opened()
		return
	}
	opened()
	defer stream.Close()
	r := bufio.NewReaderSize(stream, 64<<10)
	var local []time.Duration
	defer func() { lat.add(local) }()
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			if err == bufio.ErrBufferFull {
				continue
			}
			if ctx.Err() == nil {
				w.end(fmt.Errorf("stream ended: %w", err))
			}
			return
		}
		now := time.Now()
		if bytes.HasPrefix(line, []byte(`{"type":"ERROR"`)) {
			if bytes.Contains(line, []byte(`"code":410`)) {
				w.gone.Store(true)
			}
			w.end(fmt.Errorf("%s", bytes.TrimSpace(line)))
			return
		}
		if i := bytes.Index(line, rvKey); i >= 0 {
			rest := line[i+len(rvKey):]
			if j := bytes.IndexByte(rest, '"'); j >= 0 {
				w.lastRV.Store(string(rest[:j]))
			}
		}
		if bytes.HasPrefix(line, []byte(`{"type":"BOOKMARK"`)) {
			continue
		}
		w.events.Add(1)
		if i := bytes.Index(line, sentKey); i >= 0 {
			rest := line[i+len(sentKey):]
			if j := bytes.IndexByte(rest, '"'); j >= 0 {
				if ns, err := strconv.ParseInt(string(rest[:j]), 10, 64); err == nil {
					local = append(local, now.Sub(time.Unix(0, ns)))
				}
			}
		}
	}
}

// startEtcd starts a fresh embedded etcd for one storage's run.
func startEtcd(b *testing.B) *embedtest.Server {
	b.Helper()
	srv, err := embedtest.StartServer(embedtest.Options{})
	if err != nil {
		b.Fatal(err)
	}
	return srv
}
