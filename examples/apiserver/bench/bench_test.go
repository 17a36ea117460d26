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
	"testing"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"

	"github.com/listwatch/listwatch/examples/apiserver/server"
)

var (
	flagObjects   = flag.Int("apiserver.objects", 10000, "widgets listed (and cached) per storage")
	flagWatchers  = flag.String("apiserver.watchers", "200,1000,5000", "comma-separated watcher counts of the fan-out runs (empty: none)")
	flagProtocols = flag.String("apiserver.protocols", "h2", "comma-separated HTTP versions of the fan-out runs' watchers: h2 (HTTP/2, 100 watches per connection) and/or h1 (HTTP/1.1, one connection per watch)")
	flagPace      = flag.String("apiserver.pace", "0", "comma-separated writer paces of the fan-out runs: 0 writes as fast as one writer can, a duration (200ms) writes once per duration so that the latencies are those of one write reaching every watcher")
	flagDuration  = flag.Duration("apiserver.duration", 5*time.Second, "how long the writer writes in each fan-out run")
	flagStorages  = flag.String("apiserver.storages", "kubernetes,listwatch", "comma-separated storages, in the order they run")
	flagChild     = flag.Bool("apiserver.child", false, "run the one storage of -apiserver.storages and print its result as JSON (set by the parent)")
	flagResume    = flag.Int("apiserver.resume", 100, "watchers open across the restart run (0: no restart run)")
	flagServerLog = flag.Bool("apiserver.serverlog", false, "write the servers' warnings and errors to stderr")
	flagProfile   = flag.String("apiserver.cpuprofile", "", "directory to write a CPU profile of each fan-out run to (<storage>-<protocol>-<watchers>[-pace<pace>].pprof; the child process: server, etcd, the writer and, unless -apiserver.watchproc, the watchers; their goroutines labelled bench=client)")
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
	Watchers int
	Protocol protocol
	// Pace is the time between two writes (0: as fast as one writer can).
	Pace time.Duration
	// Connections is how many connections the watchers' clients dialed.
	Connections int64
	// Refused counts the watchers whose watch was not established; Lost
	// those whose watch the server ended during the run.
	Refused, Lost int
	Writes        int
	WritesPerSec  float64
	EventsPerSec  float64
	P50, P99, Max time.Duration
	// ReachP50 and ReachP99 are, with a pace, the quantiles over the
	// writes of the time from sending one until every watcher still
	// watching received it.
	ReachP50, ReachP99 time.Duration
	Delivered, Wants   int64
	// CPU is the process's user+system CPU time (server, etcd and
	// clients) from the first write until the events were delivered; with
	// a pace, summed over each write's span from its sending until every
	// watcher received it.
	CPU time.Duration
	// ClientShare is the share of the process's CPU profile spent in the
	// clients' goroutines (the writer, the watchers and their connections),
	// -1 if unknown; the rest is the server's and etcd's (and the garbage
	// collector's).
	ClientShare float64
	// Elapsed is the wall time of the same spans.
	Elapsed time.Duration
	// Others is the CPU time other processes on the machine used in the
	// same spans (-1: unknown); with a pace, their share of the whole run
	// scaled to the spans.
	Others time.Duration
	// Note says what went wrong, if anything did (the writer failed,
	// watchers still short of events or not stopping at the deadline).
	Note string
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
	if *flagWatchChild != "" {
		runWatchChild(b, *flagWatchChild)
		return
	}
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
	counts, protos, paces := parseWatchers(b, *flagWatchers), parseProtocols(b, *flagProtocols), parsePaces(b, *flagPace)
	ends := 2 // the watchers' connections have both ends in this process
	if *flagWatchProc {
		ends = 1
	}
	raiseFileLimit(b, counts, protos, ends)
	for _, w := range counts {
		for _, proto := range protos {
			for _, pace := range paces {
				res.Fan = append(res.Fan, fanOut(b, srv, w, proto, pace))
			}
		}
	}
	if *flagResume > 0 {
		res.ResumeWatchers = *flagResume
		res.Resume = restartResume(b, &srv, kind, etcd.Endpoints, *flagResume, func(ns string, k int) {
			putWidgets(b, etcd.Client, ns, k)
		})
		res.ResumeRelist = res.Resume.relists()
	}
	return res
}

// parseWatchers parses -apiserver.watchers.
func parseWatchers(b *testing.B, s string) []int {
	b.Helper()
	var ns []int
	for _, f := range strings.Split(s, ",") {
		if strings.TrimSpace(f) == "" {
			continue // no fan-out run
		}
		w, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || w <= 0 {
			b.Fatalf("bad -apiserver.watchers %q", s)
		}
		ns = append(ns, w)
	}
	return ns
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

func printTable(w io.Writer, results []result) {
	if len(results) == 0 {
		return
	}
	fmt.Fprintf(w, "\nwatch fan-out over HTTPS (one writer, %v per run; pace 0: as fast as it can, else one write per pace, so that the latencies are one write's to every watcher)\n", *flagDuration)
	fmt.Fprintf(w, "| storage | protocol | watchers | connections | pace | writes/s | delivered events/s | delivered/expected | refused | lost | p50 | p99 | max | one write to all: p50 | p99 | process CPU per delivered event | server CPU per delivered event | process CPU (cores) | other processes' CPU (cores) |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	var notes []string
	for _, r := range results {
		for _, f := range r.Fan {
			fmt.Fprintf(w, "| %s | %s | %d | %d | %s | %.0f | %.0f | %d/%d | %d | %d | %s | %s | %s | %s | %s | %s | %s | %.2f | %.2f |\n", r.Kind, f.Protocol, f.Watchers, f.Connections,
				paceString(f.Pace), f.WritesPerSec, f.EventsPerSec, f.Delivered, f.Wants, f.Refused, f.Lost, ms(f.P50), ms(f.P99), ms(f.Max),
				reachMs(f, f.ReachP50), reachMs(f, f.ReachP99),
				cpuPerEvent(f), serverPerEvent(f), f.CPU.Seconds()/f.Elapsed.Seconds(), f.Others.Seconds()/f.Elapsed.Seconds())
			if f.Note != "" {
				notes = append(notes, fmt.Sprintf("%s, %s, %d watchers, pace %s: %s", r.Kind, f.Protocol, f.Watchers, paceString(f.Pace), f.Note))
			}
		}
	}
	for _, n := range notes {
		fmt.Fprintln(w, n)
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
		for _, kf := range k.Fan {
			for _, lf := range l.Fan {
				if lf.Watchers != kf.Watchers || lf.Protocol != kf.Protocol || lf.Pace != kf.Pace {
					continue
				}
				server := "-"
				if lf.ClientShare >= 0 && kf.ClientShare >= 0 {
					server = fmt.Sprintf("%.2fx", perEvent(lf)*(1-lf.ClientShare)/(perEvent(kf)*(1-kf.ClientShare)))
				}
				fmt.Fprintf(w, " %s at %d watchers, pace %s: events/s %.2fx (p99 %.2fx, CPU per event %.2fx, server CPU per event %s);", kf.Protocol, kf.Watchers, paceString(kf.Pace),
					lf.EventsPerSec/kf.EventsPerSec, float64(lf.P99)/float64(kf.P99), perEvent(lf)/perEvent(kf), server)
			}
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

// serverPerEvent is f's process CPU per delivered event less the clients'
// share of it (server, etcd and the garbage collector).
func serverPerEvent(f fanResult) string {
	if f.ClientShare < 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f µs", perEvent(f)*(1-f.ClientShare)*1e6)
}

// reachMs is a one-write-to-all quantile of f, "-" without a pace.
func reachMs(f fanResult, d time.Duration) string {
	if f.Pace == 0 || d == 0 {
		return "-"
	}
	return ms(d)
}

func paceString(d time.Duration) string {
	if d == 0 {
		return "0"
	}
	return d.String()
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }
