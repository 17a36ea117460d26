package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/listwatch/listwatch/examples/apiserver/server"
)

var (
	flagObjects   = flag.Int("apiserver.objects", 10000, "widgets listed (and cached) per storage")
	flagWatchers  = flag.String("apiserver.watchers", "200,1000,5000", "comma-separated watcher counts of the fan-out runs (empty: none)")
	flagDuration  = flag.Duration("apiserver.duration", 5*time.Second, "how long the writer writes in each fan-out run")
	flagStorages  = flag.String("apiserver.storages", "kubernetes,listwatch", "comma-separated storages, in the order they run")
	flagChild     = flag.Bool("apiserver.child", false, "run the one storage of -apiserver.storages and print its result as JSON (set by the parent)")
	flagResume    = flag.Int("apiserver.resume", 100, "watchers open across the restart run (0: no restart run)")
	flagServerLog = flag.Bool("apiserver.serverlog", false, "write the servers' warnings and errors to stderr")
	flagProfile   = flag.String("apiserver.cpuprofile", "", "directory to write a CPU profile of each fan-out run to (<storage>-<watchers>.pprof; the child process: server, etcd and clients)")
)

// fanObjects is how many widgets the writer updates round robin.
const fanObjects = 100

// result is one storage's measurements.
type result struct {
	Kind                         server.Storage
	Fan                          []fanResult
	ListZero, ListConsistent     time.Duration
	ListBytes                    int
	HeapPerObject                float64
	ResumeWatchers, ResumeRelist int
	// Resume is how the watchers settled after the restart.
	Resume resumeSummary
}

type fanResult struct {
	Watchers         int
	WritesPerSec     float64
	EventsPerSec     float64
	P50, P99         time.Duration
	Delivered, Wants int64
	// CPU is the process's user+system CPU time from the first write
	// until the events were delivered (server, etcd and clients).
	CPU time.Duration
	// Elapsed is the wall time of the same span.
	Elapsed time.Duration
	// Others is the CPU time other processes on the machine used in the
	// same span (-1: unknown).
	Others time.Duration
}

// resultPrefix starts the line a child process reports its result on.
const resultPrefix = "APISERVER-RESULT "

// BenchmarkApiserver runs the example apiserver on Kubernetes' storage, then
// on listwatch's, each in a child process of its own (so that neither
// measures what the other left behind) with a fresh embedded etcd in it,
// and prints one table.
func BenchmarkApiserver(b *testing.B) {
	klog.LogToStderr(false)
	klog.SetOutput(io.Discard)
	if *flagChild {
		r := runStorage(b, server.Storage(*flagStorages))
		out, err := json.Marshal(r)
		if err != nil {
			b.Fatal(err)
		}
		fmt.Printf("%s%s\n", resultPrefix, out)
		return
	}
	var results []result
	for _, name := range strings.Split(*flagStorages, ",") {
		kind := server.Storage(strings.TrimSpace(name))
		b.Run("storage="+string(kind), func(b *testing.B) {
			for range b.N {
				results = append(results, runChild(b, kind))
			}
		})
	}
	printTable(os.Stdout, results)
}

// runChild runs this benchmark for kind in a child process and returns
// the result it reports.
func runChild(b *testing.B, kind server.Storage) result {
	b.Helper()
	args := []string{"-test.run=^$", "-test.bench=^BenchmarkApiserver$", "-test.benchtime=1x",
		"-apiserver.child", "-apiserver.storages=" + string(kind)}
	flag.Visit(func(f *flag.Flag) {
		if strings.HasPrefix(f.Name, "apiserver.") && f.Name != "apiserver.storages" && f.Name != "apiserver.child" {
			args = append(args, "-"+f.Name+"="+f.Value.String())
		}
	})
	cmd := exec.Command(os.Args[0], args...)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("child for %s: %v\n%s", kind, err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if js, ok := strings.CutPrefix(line, resultPrefix); ok {
			var r result
			if err := json.Unmarshal([]byte(js), &r); err != nil {
				b.Fatal(err)
			}
			return r
		}
	}
	b.Fatalf("child for %s reported no result:\n%s", kind, out)
	return result{}
}

func runStorage(b *testing.B, kind server.Storage) result {
	etcd := startEtcd(b)
	defer etcd.Close()
	srv := startServer(b, kind, etcd.Endpoints)
	defer func() { srv.stop() }()
	rc := srv.client(b)
	ctx := context.Background()
	res := result{Kind: kind}

	// Heap per cached object: the process's live heap before and after
	// the server cached the objects written into etcd.
	n := *flagObjects
	h0 := heapInUse()
	putWidgets(b, etcd.Client, "list", n)
	waitCount(b, rc, "list", n)
	h1 := heapInUse()
	res.HeapPerObject = float64(int64(h1)-int64(h0)) / float64(n)

	res.ListZero, res.ListBytes = listLatency(b, rc, "0")
	res.ListConsistent, _ = listLatency(b, rc, "")

	putWidgets(b, etcd.Client, "fan", fanObjects)
	waitCount(b, rc, "fan", fanObjects)
	for _, f := range strings.Split(*flagWatchers, ",") {
		if strings.TrimSpace(f) == "" {
			continue // no fan-out run
		}
		w, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || w <= 0 {
			b.Fatalf("bad -apiserver.watchers %q", *flagWatchers)
		}
		res.Fan = append(res.Fan, fanOut(b, srv, w))
	}
	_ = ctx
	if *flagResume > 0 {
		res.ResumeWatchers = *flagResume
		res.Resume = restartResume(b, &srv, kind, etcd.Endpoints, *flagResume, func(ns string, k int) {
			putWidgets(b, etcd.Client, ns, k)
		})
		res.ResumeRelist = res.Resume.relists()
	}
	return res
}

func waitCount(b *testing.B, rc *rest.RESTClient, ns string, n int) {
	b.Helper()
	for deadline := time.Now().Add(120 * time.Second); ; {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		got, err := countItems(ctx, rc, ns)
		cancel()
		if err == nil && got == n {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%s: %d of %d widgets served (%v)", ns, got, n, err)
		}
		time.Sleep(100 * time.Millisecond) // polling the server
	}
}

// listLatency is the median of 10 lists of the list namespace at rv.
func listLatency(b *testing.B, rc *rest.RESTClient, rv string) (time.Duration, int) {
	b.Helper()
	var ds []time.Duration
	var size int
	for i := range 12 {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		start := time.Now()
		n, err := listOnce(ctx, rc, "list", rv)
		d := time.Since(start)
		cancel()
		if err != nil {
			b.Fatal(err)
		}
		if i >= 2 { // two warm-up lists
			ds = append(ds, d)
		}
		size = n
	}
	slices.Sort(ds)
	return ds[len(ds)/2], size
}

// currentRV lists ns and returns the list's resourceVersion.
func currentRV(b *testing.B, rc *rest.RESTClient, ns string) string {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	body, err := rc.Get().AbsPath(fmt.Sprintf(widgetsPath, ns)).Param("limit", "1").DoRaw(ctx)
	if err != nil {
		b.Fatal(err)
	}
	i := bytes.Index(body, rvKey)
	if i < 0 {
		b.Fatalf("no resourceVersion in %s", body)
	}
	rest := body[i+len(rvKey):]
	return string(rest[:bytes.IndexByte(rest, '"')])
}

// openWatchers opens w watches of ns from rv, spread over one client per
// 100 watches, and returns once all are established.
func openWatchers(b *testing.B, ctx context.Context, srv *running, ns, rv string, w int, lat *latencies) ([]*watcher, *sync.WaitGroup) {
	b.Helper()
	ws := make([]*watcher, w)
	var done, open sync.WaitGroup
	var rc *rest.RESTClient
	for i := range ws {
		if i%100 == 0 {
			rc = srv.client(b)
		}
		ws[i] = &watcher{}
		ws[i].lastRV.Store(rv)
		open.Add(1)
		done.Add(1)
		go func(w *watcher, rc *rest.RESTClient) {
			defer done.Done()
			if err := w.run(ctx, rc, ns, rv, lat, open.Done); err != nil && ctx.Err() == nil {
				b.Errorf("watch: %v", err)
			}
		}(ws[i], rc)
	}
	open.Wait()
	return ws, &done
}

// fanOut opens w watchers of the fan namespace, writes as fast as one
// writer can for the configured duration, and measures the delivery.
func fanOut(b *testing.B, srv *running, w int) fanResult {
	b.Helper()
	lat := &latencies{}
	ctx, cancel := context.WithCancel(context.Background())
	rc := srv.client(b)
	ws, done := openWatchers(b, ctx, srv, "fan", currentRV(b, rc, "fan"), w, lat)
	stopProfile := startProfile(b, srv.kind, w)
	writes := 0
	cpu0, machine0 := processCPU(b), machineCPU()
	start := time.Now()
	for time.Since(start) < *flagDuration {
		patch := fmt.Sprintf(`{"metadata":{"annotations":{%q:"%d"}}}`, sentAnno, time.Now().UnixNano())
		wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
		_, err := rc.Patch(types.MergePatchType).AbsPath(fmt.Sprintf(widgetsPath, "fan") + fmt.Sprintf("/w-%06d", writes%fanObjects)).
			Body([]byte(patch)).DoRaw(wctx)
		wcancel()
		if err != nil {
			b.Fatal(err)
		}
		writes++
	}
	elapsed := time.Since(start)
	want := int64(writes) * int64(w)
	// Wait for the watchers to receive what was written (up to 30 s).
	var got int64
	for deadline := time.Now().Add(30 * time.Second); ; {
		got = 0
		for _, x := range ws {
			got += x.events.Load()
		}
		if got >= want || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond) // polling counters
	}
	deliveredIn := time.Since(start)
	cpu, machine := processCPU(b)-cpu0, machineCPU()
	others := time.Duration(-1)
	if machine0 >= 0 && machine >= 0 {
		others = max(0, machine-machine0-cpu)
	}
	stopProfile()
	cancel()
	done.Wait()
	return fanResult{
		Watchers: w, WritesPerSec: float64(writes) / elapsed.Seconds(),
		EventsPerSec: float64(got) / deliveredIn.Seconds(),
		P50:          lat.quantile(0.50), P99: lat.quantile(0.99),
		Delivered: got, Wants: want,
		CPU: cpu, Elapsed: deliveredIn, Others: others,
	}
}

func printTable(w io.Writer, results []result) {
	if len(results) == 0 {
		return
	}
	fmt.Fprintf(w, "\nwatch fan-out over HTTPS (one writer, %v per run)\n", *flagDuration)
	fmt.Fprintf(w, "| storage | watchers | writes/s | delivered events/s | delivered/expected | p50 | p99 | process CPU per delivered event | process CPU (cores) | other processes' CPU (cores) |\n|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range results {
		for _, f := range r.Fan {
			fmt.Fprintf(w, "| %s | %d | %.0f | %.0f | %d/%d | %s | %s | %s | %.2f | %.2f |\n", r.Kind, f.Watchers, f.WritesPerSec, f.EventsPerSec,
				f.Delivered, f.Wants, ms(f.P50), ms(f.P99), cpuPerEvent(f), f.CPU.Seconds()/f.Elapsed.Seconds(), f.Others.Seconds()/f.Elapsed.Seconds())
		}
	}
	fmt.Fprintf(w, "\nlists of %d widgets (median of 10), process heap growth per cached object, restart\n", *flagObjects)
	fmt.Fprintf(w, "| storage | list RV=0 | list consistent | list bytes | heap growth per cached object | watchers relisting after a restart |\n|---|---|---|---|---|---|\n")
	for _, r := range results {
		fmt.Fprintf(w, "| %s | %s | %s | %d | %.0f B | %d of %d |\n", r.Kind, ms(r.ListZero), ms(r.ListConsistent), r.ListBytes,
			r.HeapPerObject, r.ResumeRelist, r.ResumeWatchers)
	}
	printResume(w, results)
	if len(results) == 2 {
		k, l := results[0], results[1]
		if k.Kind == server.StorageListwatch {
			k, l = l, k
		}
		fmt.Fprintf(w, "\nlistwatch / kubernetes:")
		for i := range min(len(k.Fan), len(l.Fan)) {
			fmt.Fprintf(w, " events/s at %d watchers %.2fx (p99 %.2fx, CPU per event %.2fx);", k.Fan[i].Watchers,
				l.Fan[i].EventsPerSec/k.Fan[i].EventsPerSec, float64(l.Fan[i].P99)/float64(k.Fan[i].P99),
				perEvent(l.Fan[i])/perEvent(k.Fan[i]))
		}
		fmt.Fprintf(w, " list RV=0 %.2fx, consistent %.2fx; heap per object %.2fx\n",
			float64(l.ListZero)/float64(k.ListZero), float64(l.ListConsistent)/float64(k.ListConsistent), l.HeapPerObject/k.HeapPerObject)
	}
}

// perEvent is f's process CPU time per delivered event, in seconds.
func perEvent(f fanResult) float64 {
	if f.Delivered == 0 {
		return 0
	}
	return f.CPU.Seconds() / float64(f.Delivered)
}

func cpuPerEvent(f fanResult) string { return fmt.Sprintf("%.1f µs", perEvent(f)*1e6) }

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }
