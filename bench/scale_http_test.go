package bench

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	goruntime "runtime"

	"github.com/listwatch/listwatch/cacher"
	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/internal/testapi"
	"github.com/listwatch/listwatch/server"
	"github.com/listwatch/listwatch/storage/etcd3"
)

var (
	scaleHTTPObjects  = flag.Int("scale.httpobjects", 10000, "BenchmarkScaleHTTP: objects of about 1 KiB to prime")
	scaleHTTPWatchers = flag.Int("scale.httpwatchers", 100, "BenchmarkScaleHTTP: idle HTTP watches to open (each one connection)")
)

// scaleHTTPChildEnv, when set, makes this test binary the client process of
// BenchmarkScaleHTTP: the value is "baseURL watchers rv". The child opens its
// watches, prints "READY", then for every line it reads on stdin waits
// for the next event on watch 0 and prints the unix ns of its receipt.
const scaleHTTPChildEnv = "LISTWATCH_SCALE_HTTP_CHILD"

func init() {
	if v := os.Getenv(scaleHTTPChildEnv); v != "" {
		os.Exit(scaleHTTPChild(v))
	}
}

// scaleHTTPPath is the watch of watcher i: the one object scaleKey(i)
// (which need not exist), by namespace and metadata.name, from rv (so that
// it gets no initial ADDED event).
func scaleHTTPPath(i int, rv string) string {
	return fmt.Sprintf("/apis/demo.listwatch.dev/v1/namespaces/ns-%d/widgets?watch=true&resourceVersion=%s&fieldSelector=metadata.name%%3Dw-%07d", i%100, rv, i)
}

func scaleHTTPChild(args string) int {
	f := strings.Fields(args)
	if len(f) != 3 {
		fmt.Fprintln(os.Stderr, "scale http child: bad args", args)
		return 2
	}
	n, _ := strconv.Atoi(f[1])
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: -1, DisableCompression: true}}
	bodies := make([]io.ReadCloser, n)
	var next atomic.Int64
	var failed atomic.Value
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				resp, err := client.Get(f[0] + scaleHTTPPath(i, f[2]))
				if err == nil && resp.StatusCode != http.StatusOK {
					err = fmt.Errorf("status %s", resp.Status)
				}
				if err != nil {
					failed.Store(fmt.Errorf("watch %d: %w", i, err))
					return
				}
				bodies[i] = resp.Body
			}
		})
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	// Only watch 0 is read, as its events arrive; the others stay idle
	// (nothing is written to their keys, and they asked for no bookmarks).
	received := make(chan int64, 16)
	go func() {
		defer close(received)
		events := bufio.NewReader(bodies[0])
		for {
			if _, err := events.ReadString('\n'); err != nil {
				return
			}
			received <- time.Now().UnixNano()
		}
	}()
	fmt.Println("READY")
	in := bufio.NewScanner(os.Stdin)
	for in.Scan() {
		at, ok := <-received
		if !ok {
			fmt.Fprintln(os.Stderr, "watch 0 ended")
			return 1
		}
		fmt.Println(at)
	}
	for _, b := range bodies {
		b.Close()
	}
	return 0
}

// BenchmarkScaleHTTP is SCALE over HTTP (make bench-scale-http): the HTTP
// server (server.New over a cacher, as cacher-demo serve runs it) over
// -scale.httpobjects objects, with -scale.httpwatchers idle watches, each
// its own connection and its own object (fieldSelector metadata.name). The
// clients run in a child process, so that the heap and goroutines reported
// per watcher are the server process's alone (HTTP server, server watch,
// cacher watcher, once parked); one connection costs one file descriptor
// on each side, so two processes with 20,000 descriptors each allow about
// 18,000. (server's BenchmarkHTTPIdleWatchers opens its watches on one
// namespace and times one event's delivery to all of them.)
// It also reports the latency of an event from the put to etcd to its
// receipt by the one client watching that key, with all the others
// registered: the median and the slowest of 21 puts made one at a time.
func BenchmarkScaleHTTP(b *testing.B) {
	n, w := *scaleHTTPObjects, max(*scaleHTTPWatchers, 1)
	b.Run(fmt.Sprintf("objects=%d/watchers=%d", n, w), func(b *testing.B) {
		srv := embedtest.Start(b, embedtest.Options{QuotaBackendBytes: 8 << 30})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
		defer cancel()
		primeScale(b, ctx, srv, n)
		store, err := etcd3.New(etcd3.Config{Client: srv.Client, Codec: testapi.UnstructuredCodec, NewFunc: testapi.NewUnstructured,
			NewListFunc: testapi.NewUnstructuredList, ResourcePrefix: "/widgets"})
		if err != nil {
			b.Fatal(err)
		}
		defer store.Close()
		c, stopCacher, err := runCacher(ctx, cacher.Config{Storage: store, ResourcePrefix: "/widgets", NewFunc: testapi.NewUnstructured,
			NewListFunc: testapi.NewUnstructuredList, GetAttrs: testapi.GetAttrs})
		if err != nil {
			b.Fatal(err)
		}
		defer stopCacher()
		api, err := server.New(server.Config{Resources: []server.Resource{{
			Group: "demo.listwatch.dev", Version: "v1", Plural: "widgets", Kind: "Widget", Namespaced: true,
			Storage: c, KeyRoot: "/widgets", GetAttrs: testapi.GetAttrs, Schema: testapi.WidgetSchema(),
		}}, MaxWatchTimeout: 2 * time.Hour})
		if err != nil {
			b.Fatal(err)
		}
		ts := httptest.NewServer(api)
		defer ts.Close()
		defer api.Close()

		before := liveHeap()
		goroutines, stacks := goruntime.NumGoroutine(), stackInUse()
		start := time.Now()
		child := exec.Command(os.Args[0], "-test.run=^$", "-test.bench=^$")
		rv, err := c.GetCurrentResourceVersion(ctx)
		if err != nil {
			b.Fatal(err)
		}
		child.Env = append(os.Environ(), fmt.Sprintf("%s=%s %d %d", scaleHTTPChildEnv, ts.URL, w, rv))
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
		// goroutines after the park delay: wait for that, then until the
		// goroutine count holds still for a second (at most a minute).
		settleStart, last, since := time.Now(), goruntime.NumGoroutine(), time.Now()
		for (time.Since(settleStart) < cacher.DefaultIdleWatcherParkDelay+time.Second || time.Since(since) < time.Second) &&
			time.Since(settleStart) < time.Minute {
			time.Sleep(100 * time.Millisecond)
			if g := goruntime.NumGoroutine(); g != last {
				last, since = g, time.Now()
			}
		}
		after := liveHeap()
		perWatcher := float64(int64(after)-int64(before)) / float64(w)
		stackPer := float64(int64(stackInUse())-int64(stacks)) / float64(w)
		goroutinesPer := float64(goruntime.NumGoroutine()-goroutines) / float64(w)

		// The event latency: 21 puts of the watched object, one at a time;
		// their median and the slowest.
		var latencies []time.Duration
		for i := range b.N * 21 {
			sent := time.Now()
			if _, err := srv.Client.Put(ctx, scaleKey(0), string(scaleValue(b, 0, fmt.Sprint("updated-", i)))); err != nil {
				b.Fatal(err)
			}
			fmt.Fprintln(stdin, "next")
			line, err := out.ReadString('\n')
			if err != nil {
				b.Fatalf("child: %v", err)
			}
			got, err := strconv.ParseInt(strings.TrimSpace(line), 10, 64)
			if err != nil {
				b.Fatalf("child: %q", line)
			}
			latencies = append(latencies, time.Unix(0, got).Sub(sent))
		}
		slices.Sort(latencies)
		b.ReportMetric(opened.Seconds(), "open-s")
		b.ReportMetric(perWatcher, "heap-B/watcher")
		b.ReportMetric(stackPer, "stack-B/watcher")
		b.ReportMetric(goroutinesPer, "goroutines/watcher")
		b.ReportMetric(float64(latencies[len(latencies)/2].Microseconds())/1000, "event-p50-ms")
		b.ReportMetric(float64(latencies[len(latencies)-1].Microseconds())/1000, "event-max-ms")
	})
}
