package bench

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	goruntime "runtime"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/widget"
	"github.com/listwatch/listwatch/server"
	"github.com/listwatch/listwatch/storage/etcd3"
)

var (
	scaleHTTPObjects  = flag.Int("scale.httpobjects", 10000, "BenchmarkScaleHTTP: objects of about 1 KiB to prime")
	scaleHTTPWatchers = flag.Int("scale.httpwatchers", 100, "BenchmarkScaleHTTP: HTTP watches to open")
	scaleHTTPStreams  = flag.Int("scale.httpstreams", 100, "BenchmarkScaleHTTP: watches per HTTP/2 connection (the server's HTTP2MaxStreamsPerConnection)")
	scaleHTTPWrites   = flag.Int("scale.httpwrites", 10, "BenchmarkScaleHTTP: writes whose delivery is timed, one at a time")
	scaleHTTPProfile  = flag.String("scale.httpcpuprofile", "", "BenchmarkScaleHTTP: write the server process's CPU profile while the writes are made to this file")
	scaleHTTPHeap     = flag.String("scale.httpmemprofile", "", "BenchmarkScaleHTTP: write the server process's heap profile, once the watches settled, to this file")
	scaleHTTPSlow     = flag.Duration("scale.httpslowwatcher", server.DefaultSlowWatcherTimeout, "BenchmarkScaleHTTP: the server's SlowWatcherTimeout")
	scaleHTTPPerKey   = flag.Bool("scale.httpperkey", false, "BenchmarkScaleHTTP: each watch on one object of its own (fieldSelector), not all on one namespace")
)

// scaleHTTPChildEnv, when set, makes this test binary the client process of
// BenchmarkScaleHTTP: the value is "baseURL watchers streams rv perKey
// writes". The child opens its watches over h2c connections of streams
// watches each, prints "READY", then for every line it reads on stdin (the
// unix ns at which the next write was sent) waits until every watch
// expected to receive that write has, and prints "p50 p99 max" of their
// delivery latencies in ns.
const scaleHTTPChildEnv = "LISTWATCH_SCALE_HTTP_CHILD"

func init() {
	if v := os.Getenv(scaleHTTPChildEnv); v != "" {
		os.Exit(scaleHTTPChild(v))
	}
}

// scaleHTTPPath is the watch of watcher i from rv (so that it gets no
// initial events): namespace ns-0, where every write is made, or with
// perKey only the one object scaleKey(i) (which need not exist), by
// namespace and metadata.name.
func scaleHTTPPath(i int, rv string, perKey bool) string {
	if !perKey {
		return "/apis/demo.listwatch.dev/v1/namespaces/ns-0/widgets?watch=true&resourceVersion=" + rv
	}
	return fmt.Sprintf("/apis/demo.listwatch.dev/v1/namespaces/ns-%d/widgets?watch=true&resourceVersion=%s&fieldSelector=metadata.name%%3Dw-%07d", i%100, rv, i)
}

// scaleHTTPClients are the child's watches and the arrival times of the
// events they received.
type scaleHTTPClients struct {
	expect   int64     // watches that receive each write
	arrivals [][]int64 // [write][watch] unix ns, 0 until received
	received []atomic.Int64
	all      []chan struct{} // closed when expect watches received write k
	failed   atomic.Value    // error
}

// read records the arrival of each event line on watch i's body.
func (c *scaleHTTPClients) read(i int, body io.ReadCloser) {
	defer body.Close()
	r := bufio.NewReaderSize(body, 2048)
	for k := 0; ; {
		_, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			continue // a line longer than the buffer: read on to its end
		}
		if err != nil {
			c.failed.CompareAndSwap(nil, fmt.Errorf("watch %d ended after %d events: %w", i, k, err))
			return
		}
		if k < len(c.arrivals) {
			c.arrivals[k][i] = time.Now().UnixNano()
			if c.received[k].Add(1) == c.expect {
				close(c.all[k])
			}
		}
		k++
	}
}

func scaleHTTPChild(args string) int {
	f := strings.Fields(args)
	if len(f) != 6 {
		fmt.Fprintln(os.Stderr, "scale http child: bad args", args)
		return 2
	}
	base, rv := f[0], f[3]
	n, _ := strconv.Atoi(f[1])
	streams, _ := strconv.Atoi(f[2])
	perKey := f[4] == "true"
	writes, _ := strconv.Atoi(f[5])
	c := &scaleHTTPClients{expect: int64(n), arrivals: make([][]int64, writes), received: make([]atomic.Int64, writes),
		all: make([]chan struct{}, writes)}
	if perKey {
		c.expect = 1 // every write is to watch 0's object
	}
	for k := range writes {
		c.arrivals[k] = make([]int64, n)
		c.all[k] = make(chan struct{})
	}
	// One transport per connection: each holds streams watches on its one
	// h2c connection, waiting for a free stream rather than dialing again.
	conns := (n + streams - 1) / streams
	clients := make([]*http.Client, conns)
	for j := range clients {
		p := &http.Protocols{}
		p.SetUnencryptedHTTP2(true)
		clients[j] = &http.Client{Transport: &http.Transport{Protocols: p, DisableCompression: true,
			HTTP2: &http.HTTP2Config{StrictMaxConcurrentRequests: true}}}
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 64 {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				// Opening has a minute; the stream then lasts until the
				// process ends (or the server's timeout).
				ctx, cancel := context.WithCancel(context.Background())
				opening := time.AfterFunc(time.Minute, cancel)
				req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+scaleHTTPPath(i, rv, perKey), nil)
				var resp *http.Response
				if err == nil {
					resp, err = clients[i/streams].Do(req)
				}
				if !opening.Stop() && err == nil {
					err = errors.New("opened after its deadline")
				}
				if err == nil && (resp.StatusCode != http.StatusOK || resp.ProtoMajor != 2) {
					err = fmt.Errorf("status %s over %s", resp.Status, resp.Proto)
				}
				if err != nil {
					cancel()
					c.failed.CompareAndSwap(nil, fmt.Errorf("watch %d: %w", i, err))
					return
				}
				go c.read(i, &cancelOnClose{ReadCloser: resp.Body, cancel: cancel})
			}
		})
	}
	wg.Wait()
	if err, _ := c.failed.Load().(error); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("READY")
	in := bufio.NewScanner(os.Stdin)
	for k := 0; in.Scan() && k < writes; k++ {
		sent, err := strconv.ParseInt(strings.TrimSpace(in.Text()), 10, 64)
		if err != nil {
			fmt.Fprintln(os.Stderr, "scale http child: bad line", in.Text())
			return 2
		}
		select {
		case <-c.all[k]:
		case <-time.After(2 * time.Minute):
			fmt.Fprintf(os.Stderr, "write %d reached %d of %d watches in 2 minutes (%v)\n", k, c.received[k].Load(), c.expect, c.failed.Load())
			return 1
		}
		var lat []int64
		for _, at := range c.arrivals[k] {
			if at != 0 {
				lat = append(lat, at-sent)
			}
		}
		slices.Sort(lat)
		fmt.Println(lat[len(lat)/2], lat[len(lat)*99/100], lat[len(lat)-1])
	}
	return 0 // the watches end with the process
}

// cancelOnClose is a response body that ends its request's context when
// closed.
type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c *cancelOnClose) Close() error {
	defer c.cancel()
	return c.ReadCloser.Close()
}

// BenchmarkScaleHTTP is SCALE over HTTP (make bench-scale-http): the HTTP
// server (server.New over a cacher, as cacher-demo serve runs it, served by
// Server.Serve on loopback) over -scale.httpobjects objects, with
// -scale.httpwatchers watches opened by a child process over HTTP/2 without
// TLS (h2c), -scale.httpstreams watches per connection (the hard limit of
// 20,000 file descriptors here allows no more than about 18,000 HTTP/1.1
// watches). 100 streams per connection cost the server less CPU per
// delivered event than 1,000: net/http's HTTP/2 write scheduler looks at
// every stream of a connection for each frame it sends. All watch namespace ns-0 from the current RV, so that each
// write there is delivered to every one (with -scale.httpperkey each
// watches an object of its own, by fieldSelector, and only watch 0 gets
// the writes). Being in another process, the clients leave the heap,
// stacks and goroutines reported per watch to the server process alone
// (HTTP server, server watch, cacher watcher), measured once the cacher's
// watchers gave up their goroutines and the goroutine count holds still. Then
// -scale.httpwrites writes to one object, one at a time, each timed from
// before its put to etcd to its receipt by each watch: reported are the
// medians over the writes of the p50 and p99 over watches, the slowest
// receipt of all, and the server process's CPU time (etcd's included) per
// event delivered while the writes were made.
func BenchmarkScaleHTTP(b *testing.B) {
	n, w := *scaleHTTPObjects, max(*scaleHTTPWatchers, 1)
	streams, writes := max(*scaleHTTPStreams, 1), max(*scaleHTTPWrites, 1)
	name := fmt.Sprintf("objects=%d/watchers=%d/streams=%d", n, w, streams)
	if *scaleHTTPPerKey {
		name += "/perkey"
	}
	b.Run(name, func(b *testing.B) {
		srv := embedtest.Start(b, embedtest.Options{QuotaBackendBytes: 8 << 30})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
		defer cancel()
		primeScale(b, ctx, srv, n)
		store, err := etcd3.New(etcd3.Config{Client: srv.Client, Codec: widget.UnstructuredCodec, NewFunc: widget.NewUnstructured,
			NewListFunc: widget.NewUnstructuredList, ResourcePrefix: "/widgets"})
		if err != nil {
			b.Fatal(err)
		}
		defer store.Close()
		c, stopCacher, err := runCacher(ctx, cacher.Config{Storage: store, ResourcePrefix: "/widgets", NewFunc: widget.NewUnstructured,
			NewListFunc: widget.NewUnstructuredList, GetAttrs: widget.GetAttrs})
		if err != nil {
			b.Fatal(err)
		}
		defer stopCacher()
		api, err := server.New(server.Config{Resources: []server.Resource{{
			Group: "demo.listwatch.dev", Version: "v1", Plural: "widgets", Kind: "Widget", Namespaced: true,
			Storage: c, KeyRoot: "/widgets", GetAttrs: widget.GetAttrs, Schema: widget.Schema(),
		}}, MaxWatchTimeout: 2 * time.Hour, HTTP2MaxStreamsPerConnection: streams,
			SlowWatcherTimeout: *scaleHTTPSlow, MaxWatches: -1}) // the benchmark is the one user, past any sane cap
		if err != nil {
			b.Fatal(err)
		}
		ln, err := server.Listen("127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		serveCtx, stopServing := context.WithCancel(context.Background())
		served := make(chan error, 1)
		go func() { served <- api.Serve(serveCtx, ln) }()
		defer func() {
			stopServing()
			if err := <-served; err != nil {
				b.Error(err)
			}
		}()

		before := liveHeap()
		goroutines, stacks := goruntime.NumGoroutine(), stackInUse()
		start := time.Now()
		child := exec.Command(os.Args[0], "-test.run=^$", "-test.bench=^$")
		rv, err := c.GetCurrentResourceVersion(ctx)
		if err != nil {
			b.Fatal(err)
		}
		child.Env = append(os.Environ(), fmt.Sprintf("%s=http://%s %d %d %d %t %d", scaleHTTPChildEnv, ln.Addr(), w, streams, rv,
			*scaleHTTPPerKey, writes))
		child.Stderr = os.Stderr
		stdin, err := child.StdinPipe()
		if err != nil {
			b.Fatal(err)
		}
		stdout, err := child.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		if err := child.Start(); err != nil {
			b.Fatal(err)
		}
		defer func() {
			stdin.Close()
			_ = child.Wait()
		}()
		out := bufio.NewReader(stdout)
		if line, err := out.ReadString('\n'); err != nil || strings.TrimSpace(line) != "READY" {
			_ = child.Process.Kill()
			b.Fatalf("child: %q %v", line, err)
		}
		opened := time.Since(start)
		// The server registers a watch before it answers its headers, so
		// every watch is in place. Idle cacher watchers give up their
		// goroutines once they joined live dispatch: wait until the
		// goroutine count holds still for a second (at most a minute).
		settleStart, last, since := time.Now(), goruntime.NumGoroutine(), time.Now()
		for time.Since(since) < time.Second &&
			time.Since(settleStart) < time.Minute {
			time.Sleep(100 * time.Millisecond)
			if g := goruntime.NumGoroutine(); g != last {
				last, since = g, time.Now()
			}
		}
		after := liveHeap()
		if *scaleHTTPHeap != "" {
			f, err := os.Create(*scaleHTTPHeap)
			if err != nil {
				b.Fatal(err)
			}
			if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
				b.Fatal(err)
			}
			f.Close()
		}
		perWatcher := float64(int64(after)-int64(before)) / float64(w)
		stackPer := float64(int64(stackInUse())-int64(stacks)) / float64(w)
		goroutinesPer := float64(goruntime.NumGoroutine()-goroutines) / float64(w)

		// The delivery latency of writes to one object, one at a time.
		var p50s, p99s []time.Duration
		var slowest time.Duration
		cpu0, childCPU0 := selfCPU(b), procCPU(b, child.Process.Pid)
		if *scaleHTTPProfile != "" {
			f, err := os.Create(*scaleHTTPProfile)
			if err != nil {
				b.Fatal(err)
			}
			defer f.Close()
			if err := pprof.StartCPUProfile(f); err != nil {
				b.Fatal(err)
			}
		}
		for i := range writes {
			sent := time.Now()
			if _, err := srv.Client.Put(ctx, scaleKey(0), string(scaleValue(b, 0, fmt.Sprint("updated-", i)))); err != nil {
				b.Fatal(err)
			}
			fmt.Fprintln(stdin, sent.UnixNano())
			line, err := out.ReadString('\n')
			if err != nil {
				b.Fatalf("child: %v", err)
			}
			var p50, p99, most time.Duration
			if _, err := fmt.Sscan(line, &p50, &p99, &most); err != nil {
				b.Fatalf("child: %q: %v", line, err)
			}
			b.Logf("write %d: delivered to all in %v (p50 %v, p99 %v)", i, most, p50, p99)
			p50s, p99s, slowest = append(p50s, p50), append(p99s, p99), max(slowest, most)
		}
		deliveries := float64(writes) * float64(w)
		if *scaleHTTPPerKey {
			deliveries = float64(writes)
		}
		pprof.StopCPUProfile()
		cpuPer := float64(selfCPU(b)-cpu0) / deliveries
		childCPUPer := float64(procCPU(b, child.Process.Pid)-childCPU0) / deliveries
		slices.Sort(p50s)
		slices.Sort(p99s)
		b.ReportMetric(opened.Seconds(), "open-s")
		b.ReportMetric(perWatcher+stackPer, "mem-B/watcher") // what server.WatchMemoryEstimate stands for
		b.ReportMetric(perWatcher, "heap-B/watcher")
		b.ReportMetric(stackPer, "stack-B/watcher")
		b.ReportMetric(goroutinesPer, "goroutines/watcher")
		b.ReportMetric(ms(p50s[len(p50s)/2]), "event-p50-ms")
		b.ReportMetric(ms(p99s[len(p99s)/2]), "event-p99-ms")
		b.ReportMetric(ms(slowest), "event-max-ms")
		b.ReportMetric(cpuPer, "server-cpu-ns/delivery")
		b.ReportMetric(childCPUPer, "client-cpu-ns/delivery")
	})
}

// procCPU is the CPU time (user and system) process pid has used, from
// /proc (in clock ticks of 10 ms).
func procCPU(b *testing.B, pid int) time.Duration {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// The fields after the command name, which is in parentheses: utime
	// and stime are the 12th and 13th.
	f := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	if len(f) < 13 {
		b.Fatalf("/proc/%d/stat: %q", pid, data)
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// selfCPU is the CPU time (user and system) this process has used.
func selfCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
