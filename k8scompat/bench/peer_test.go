package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	clientv3 "go.etcd.io/etcd/client/v3"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/apiserver/pkg/apis/example"
	k8sstorage "k8s.io/apiserver/pkg/storage"
	"k8s.io/klog/v2"

	"github.com/listwatch/listwatch/embedtest"
)

// The peer benchmarks run the same workload against listwatch's cacher and
// Kubernetes' cacher (k8s.io/apiserver's Cacher with its CacheDelegator over
// its etcd3 store), each on an etcd of its own, in one process and one run:
// example.Pod objects of about 1 KiB, written by one writer doing plain etcd
// puts of encoded pods (neither store's write path is involved). The codec
// is JSON, or protobuf with KUBE_TEST_API_TYPE=application/vnd.kubernetes.protobuf.
// Sizes: K8SBENCH_PEER_OBJECTS (10000), K8SBENCH_PEER_UPDATES (2000),
// K8SBENCH_PEER_WATCHERS (comma list, "10,100,1000"), and the capacity
// search's knobs (peer_capacity_test.go); K8SBENCH_PEER_RUNS
// repeats each scenario with the caches' order alternating (peer_runs_test.go).
// The knobs are listed in doc.go.
//
//	go test -run '^$' -bench Peer -benchtime 1x ./bench | go run ./cmd/benchtable

// peerBackends are the two caches compared.
func peerBackends() []backend {
	var out []backend
	for _, be := range backends {
		if be.cached {
			out = append(out, be)
		}
	}
	return out
}

func peerObjects() int { return envInt("K8SBENCH_PEER_OBJECTS", 10000) }
func peerUpdates() int { return envInt("K8SBENCH_PEER_UPDATES", 2000) }

func peerWatcherCounts() []int {
	return positiveInts(envString("K8SBENCH_PEER_WATCHERS", "10,100,1000"))
}

// padding makes a pod's encoding about 1 KiB. It is the same in every pod
// unless distinctPadding (the default) gives each pod its own (podPadding).
var padding = strings.Repeat("x", 760)

// distinctPadding makes each pod's padding differ from every other's, as
// most of the content of real objects differs: a cache that shares equal
// strings between objects saves nothing on it. It applies to the workload
// of every scenario but BenchmarkPeerMemory, which measures both paddings;
// it is the default, and K8SBENCH_PEER_DISTINCT=0 gives every pod the same
// padding.
var distinctPadding = envString("K8SBENCH_PEER_DISTINCT", "1") != "0"

// podPadding is pod i's padding: the shared one, or one of its own if
// distinct.
func podPadding(i int, distinct bool) string {
	if distinct {
		return fmt.Sprintf("%06d", i) + padding[6:]
	}
	return padding
}

// sentAt is the annotation carrying the writer's clock at the put, in ns.
const sentAt = "bench.listwatch.dev/sent"

// peerPod is pod i of the workload, sent at sent, padded as
// K8SBENCH_PEER_DISTINCT says.
func peerPod(i int, sent time.Time) *example.Pod { return paddedPod(i, sent, distinctPadding) }

// paddedPod is pod i sent at sent, with a padding of its own if distinct.
func paddedPod(i int, sent time.Time, distinct bool) *example.Pod {
	return &example.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "example.apiserver.k8s.io/v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace:   fmt.Sprintf("ns-%d", i%50),
			Name:        fmt.Sprintf("pod-%06d", i),
			Labels:      map[string]string{"app": fmt.Sprintf("app-%d", i%20)},
			Annotations: map[string]string{"pad": podPadding(i, distinct), sentAt: strconv.FormatInt(sent.UnixNano(), 10)},
		},
		Spec: example.PodSpec{NodeName: fmt.Sprintf("node-%d", i%100)},
	}
}

func podKey(p *example.Pod) string { return "/pods/" + p.Namespace + "/" + p.Name }

func encodePod(b *testing.B, p *example.Pod) []byte {
	data, err := runtimeapi.Encode(codec, p)
	if err != nil {
		b.Fatal(err)
	}
	return data
}

// primePods puts the workload's n pods straight into etcd and returns
// their mean encoded size.
func primePods(b *testing.B, srv *embedtest.Server, n int) float64 {
	b.Helper()
	return primePadded(b, srv, n, distinctPadding)
}

// primePadded puts n pods straight into etcd, each with a padding of its
// own if distinct, and returns their mean encoded size.
func primePadded(b *testing.B, srv *embedtest.Server, n int, distinct bool) float64 {
	b.Helper()
	ctx := context.Background()
	total := 0
	var ops []clientv3.Op
	flush := func() {
		if len(ops) == 0 {
			return
		}
		if _, err := srv.Client.Txn(ctx).Then(ops...).Commit(); err != nil {
			b.Fatal(err)
		}
		ops = ops[:0]
	}
	for i := range n {
		p := paddedPod(i, time.Now(), distinct)
		data := encodePod(b, p)
		total += len(data)
		ops = append(ops, clientv3.OpPut(podKey(p), string(data)))
		if len(ops) == 100 {
			flush()
		}
	}
	flush()
	return float64(total) / float64(n)
}

// latencies collects delivery latencies from many goroutines.
type latencies struct {
	mu  sync.Mutex
	all []time.Duration
}

// newLatencies has room for n latencies.
func newLatencies(n int) *latencies {
	return &latencies{all: make([]time.Duration, 0, n)}
}

func (l *latencies) add(d []time.Duration) {
	l.mu.Lock()
	l.all = append(l.all, d...)
	l.mu.Unlock()
}

func (l *latencies) quantile(q float64) time.Duration {
	if len(l.all) == 0 {
		return 0
	}
	slices.Sort(l.all)
	return l.all[min(len(l.all)-1, int(q*float64(len(l.all))))]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// fanoutRun is one run of watchers over store while updates are written.
type fanoutRun struct {
	watchers, slow int
	slowDelay      time.Duration
	// rate paces the writer (puts per second, issued on schedule by up to
	// pacedWriters puts in flight, so that one slow put does not lower the
	// offered rate); 0 writes one put at a time as fast as etcd
	// acknowledges.
	rate int
	// probe, if set, makes the run a capacity probe: it waits at most probe
	// after the last put for the watchers, and a watcher that has not got
	// every update by then counts as lost (fanoutResult.lost) instead of
	// failing the benchmark.
	probe time.Duration
	// profile, if set, is the file the process's CPU profile is written to
	// from the first put to the last delivery.
	profile string
}

type fanoutResult struct {
	delivered  int64
	elapsed    time.Duration
	cpu        time.Duration // process CPU time (user+system) over the run
	fast, all  *latencies
	terminated int
	// lost counts the watchers that did not get every update: those the
	// cache ended (terminated) and, in a probe, those still short of it
	// when the probe's wait ran out.
	lost     int
	writes   float64 // puts per second the writer achieved
	profiled bool    // the CPU profile at fanoutRun.profile is complete
}

// pacedWriters bounds the puts a paced writer has in flight.
const pacedWriters = 32

// cpuTime is the process's user plus system CPU time so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// run opens the watchers at the current RV, writes updates to existing
// pods one at a time, and waits until every watcher that is still open has
// every update.
func (r fanoutRun) run(b *testing.B, srv *embedtest.Server, store k8sstorage.Interface, objects, updates int) fanoutResult {
	b.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	list := &example.PodList{}
	if err := store.GetList(ctx, "/pods/", k8sstorage.ListOptions{Recursive: true, Predicate: k8sstorage.Everything,
		ResourceVersion: ""}, list); err != nil {
		b.Fatal(err)
	}
	// Sized for every delivery up front: grown by append, the two slices
	// were copied over and over while the watchers finished, inside the
	// measured window (runtime.memmove and latencies.add were 8% each of
	// the CPU profile of the 1,000-watcher fan-out).
	// With no slow watchers every watcher is fast: the two are one
	// collection (at 10,000 watchers each is ~100 MB).
	res := fanoutResult{all: newLatencies(r.watchers * updates)}
	res.fast = res.all
	if r.slow > 0 {
		res.fast = newLatencies((r.watchers - r.slow) * updates)
	}
	var delivered, terminated, completed atomic.Int64
	var wg sync.WaitGroup
	// Each watcher's reader has a stop channel of its own, as a watch
	// server's handler has its request's: one channel shared by every
	// reader would be locked by each receive of each of them (a select
	// locks all its channels), a contention no real client has that costs
	// every backend alike.
	stops := make([]chan struct{}, r.watchers)
	for i := range r.watchers {
		w, err := store.Watch(ctx, "/pods/", k8sstorage.ListOptions{ResourceVersion: list.ResourceVersion,
			Predicate: k8sstorage.Everything, Recursive: true})
		if err != nil {
			b.Fatal(err)
		}
		slow := i < r.slow
		stop := make(chan struct{})
		stops[i] = stop
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer w.Stop()
			lat := make([]time.Duration, 0, updates)
			got := 0
			// Counted once, at the end: a counter every reader adds to at
			// each event would bounce between the cores.
			defer func() { delivered.Add(int64(got)) }()
			for got < updates {
				select {
				case ev, ok := <-w.ResultChan():
					if !ok {
						terminated.Add(1)
						res.all.add(lat)
						return
					}
					if ev.Type != watch.Modified {
						continue
					}
					// Kubernetes' cacher may wrap the pod (cachingObject).
					if acc, err := meta.Accessor(ev.Object); err == nil {
						if ns, err := strconv.ParseInt(acc.GetAnnotations()[sentAt], 10, 64); err == nil {
							lat = append(lat, time.Since(time.Unix(0, ns)))
						}
					}
					got++
					if slow {
						time.Sleep(r.slowDelay)
					}
				case <-stop:
					res.all.add(lat)
					return
				}
			}
			completed.Add(1)
			if !slow && res.fast != res.all {
				res.fast.add(lat)
			}
			res.all.add(lat)
		}()
	}
	payloads := make([][]byte, updates)
	keys := make([]string, updates)
	rng := rand.New(rand.NewPCG(1, 2))
	stopProfile := func() bool { return false }
	if r.profile != "" {
		stopProfile = startCPUProfile(b, r.profile)
	}
	start, cpuStart := time.Now(), cpuTime()
	var puts sync.WaitGroup
	var putErr atomic.Pointer[error]
	inFlight := make(chan struct{}, pacedWriters)
	for i := range updates {
		if r.rate == 0 {
			p := peerPod(rng.IntN(objects), time.Now())
			keys[i], payloads[i] = podKey(p), encodePod(b, p)
			if _, err := srv.Client.Put(ctx, keys[i], string(payloads[i])); err != nil {
				b.Fatal(err)
			}
			continue
		}
		// The sent-at annotation is the scheduled time, so that a put the
		// writer issues late (a full pool) counts its delay in the latency.
		at := start.Add(time.Duration(i) * time.Second / time.Duration(r.rate))
		time.Sleep(time.Until(at))
		p := peerPod(rng.IntN(objects), at)
		keys[i], payloads[i] = podKey(p), encodePod(b, p)
		inFlight <- struct{}{}
		puts.Go(func() {
			defer func() { <-inFlight }()
			if _, err := srv.Client.Put(ctx, keys[i], string(payloads[i])); err != nil {
				putErr.CompareAndSwap(nil, &err)
			}
		})
	}
	puts.Wait()
	if err := putErr.Load(); err != nil {
		b.Fatal(*err)
	}
	res.writes = float64(updates) / time.Since(start).Seconds()
	finished := make(chan struct{})
	go func() { wg.Wait(); close(finished) }()
	wait := 3 * time.Minute
	if r.probe > 0 {
		wait = r.probe
	}
	select {
	case <-finished:
	case <-time.After(wait):
		for _, stop := range stops {
			close(stop)
		}
		<-finished
		if r.probe == 0 {
			b.Errorf("watchers did not receive every update within %v (%d of %d delivered)",
				wait, delivered.Load(), int64(updates)*int64(r.watchers))
		}
	}
	res.elapsed, res.cpu = time.Since(start), cpuTime()-cpuStart
	res.profiled = stopProfile()
	res.delivered = delivered.Load()
	res.terminated = int(terminated.Load())
	res.lost = r.watchers - int(completed.Load())
	return res
}

// BenchmarkPeerFanout: W watchers of every pod; one writer updates
// K8SBENCH_PEER_UPDATES pods as fast as etcd acknowledges, for each W of
// K8SBENCH_PEER_WATCHERS; then the wide fan-out (fanoutScenarios).
// Unpaced, a cache's throughput says nothing once it ends watchers (as
// Kubernetes' does past its capacity), so the only measure reported is how
// many watches the cache ended (terminated); throughput, latency and CPU
// per event are BenchmarkPeerCapacity's, at paced rates. The runs with
// 1,000 watchers write a CPU profile per cache and run
// (peer_profile_test.go).
func BenchmarkPeerFanout(b *testing.B) {
	klog.SetLogger(logr.Discard())
	peerConfig()
	objects := peerObjects()
	var written profiles
	defer written.print()
	for _, sc := range fanoutScenarios() {
		for run := 1; run <= peerRuns(); run++ {
			for _, be := range peerOrder(run) {
				b.Run(peerName(sc.name, be.name, run), func(b *testing.B) {
					srv := embedtest.Start(b)
					primePods(b, srv, objects)
					store := be.new(b, srv)
					fr := fanoutRun{watchers: sc.watchers}
					if sc.watchers == profiledWatchers {
						fr.profile = fanoutProfilePath(b, be.name, sc.watchers, run)
					}
					var res fanoutResult
					for range b.N {
						res = fr.run(b, srv, store, objects, sc.updates)
					}
					if res.profiled {
						written.add(be.name, fr.profile)
					}
					b.ReportMetric(float64(res.terminated), "terminated")
				})
			}
		}
	}
}

// fanoutScenario is one fan-out workload of BenchmarkPeerFanout.
type fanoutScenario struct {
	name              string
	watchers, updates int
}

// fanoutScenarios are the fan-outs to run: each of K8SBENCH_PEER_WATCHERS
// with K8SBENCH_PEER_UPDATES updates, then the wide fan-out,
// K8SBENCH_PEER_WIDE_WATCHERS (10000; 0 leaves it out) with
// K8SBENCH_PEER_WIDE_UPDATES (500) updates, named
// Wide/Writer=max/Watchers=W/Updates=U (so that patterns such as
// 'PeerFanout/Writer=max/Watchers=1000' leave it out), unless
// K8SBENCH_PEER_WATCHERS already has that many watchers.
func fanoutScenarios() []fanoutScenario {
	var out []fanoutScenario
	counts := peerWatcherCounts()
	for _, watchers := range counts {
		out = append(out, fanoutScenario{name: fmt.Sprintf("Writer=max/Watchers=%d", watchers),
			watchers: watchers, updates: peerUpdates()})
	}
	wide, err := strconv.Atoi(envString("K8SBENCH_PEER_WIDE_WATCHERS", "10000"))
	if err != nil || wide <= 0 || slices.Contains(counts, wide) {
		return out
	}
	updates := envInt("K8SBENCH_PEER_WIDE_UPDATES", 500)
	return append(out, fanoutScenario{name: fmt.Sprintf("Wide/Writer=max/Watchers=%d/Updates=%d", wide, updates),
		watchers: wide, updates: updates})
}

// BenchmarkPeerSlowWatchers: 100 watchers, of which Slow sleep 5 ms per
// event; reports how many watches the cache ends and the fast watchers'
// latency (compare Slow=10 with Slow=0).
func BenchmarkPeerSlowWatchers(b *testing.B) {
	klog.SetLogger(logr.Discard())
	peerConfig()
	objects, updates := peerObjects(), peerUpdates()
	for _, slow := range []int{0, 10} {
		for run := 1; run <= peerRuns(); run++ {
			for _, be := range peerOrder(run) {
				b.Run(peerName(fmt.Sprintf("Slow=%d", slow), be.name, run), func(b *testing.B) {
					srv := embedtest.Start(b)
					primePods(b, srv, objects)
					store := be.new(b, srv)
					var res fanoutResult
					for range b.N {
						res = fanoutRun{watchers: 100, slow: slow, slowDelay: 5 * time.Millisecond}.run(b, srv, store, objects, updates)
					}
					b.ReportMetric(float64(res.terminated), "terminated")
					b.ReportMetric(ms(res.fast.quantile(0.99)), "fast-p99-ms")
				})
			}
		}
	}
}

// heapInUse is the live heap after two collections.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// settledHeap waits (at most 5 s) until the live heap stops shrinking, so
// that the embedded etcd's own clean-up after the priming writes is not
// counted against the cache, and returns it.
func settledHeap() uint64 {
	last := heapInUse()
	for range 10 {
		time.Sleep(500 * time.Millisecond)
		cur := heapInUse()
		if cur+cur/100 >= last {
			return cur
		}
		last = cur
	}
	return last
}

// memoryPaddings are the paddings BenchmarkPeerMemory measures, whatever
// K8SBENCH_PEER_DISTINCT says: the workload's padding, equal in every pod,
// which a cache that shares equal strings stores once, and a padding of
// each pod's own, which it cannot share (issue 25's goal 1 is judged on
// that one).
var memoryPaddings = []struct {
	name     string
	distinct bool
}{{"shared", false}, {"distinct", true}}

// BenchmarkPeerMemory: the Go heap a cache holds for its objects (the heap
// after it is ready minus the heap before it was built, both after GC),
// per object and as a multiple of the mean encoded size, for pods whose
// padding is the same in all (Padding=shared) and for pods each with a
// padding of its own (Padding=distinct).
func BenchmarkPeerMemory(b *testing.B) {
	klog.SetLogger(logr.Discard())
	peerConfig()
	for _, objects := range []int{peerObjects(), 5 * peerObjects()} {
		for _, pad := range memoryPaddings {
			for run := 1; run <= peerRuns(); run++ {
				for _, be := range peerOrder(run) {
					b.Run(peerName(fmt.Sprintf("Objects=%d/Padding=%s", objects, pad.name), be.name, run), func(b *testing.B) {
						srv := embedtest.Start(b)
						encoded := primePadded(b, srv, objects, pad.distinct)
						var perObject float64
						for range b.N {
							before := settledHeap()
							store := be.new(b, srv)
							after := heapInUse()
							runtime.KeepAlive(store)
							perObject = (float64(after) - float64(before)) / float64(objects)
						}
						b.ReportMetric(perObject, "B/obj")
						b.ReportMetric(perObject/encoded, "x-encoded")
					})
				}
			}
		}
	}
}

// BenchmarkPeerList: lists of every pod at RV "0" and consistent (RV ""),
// and a consistent list walked in pages of 500; the median time of a full
// list over at least 11 lists (after warm-up lists spanning two GC cycles,
// see warmUp), the process CPU
// time (user+system, so GC and the embedded etcd included) per list, and
// the GC's share (gcSample.report), and the minor page faults per list
// (memory the list's items got fresh from the kernel). It logs each list's time; with
// K8SBENCH_PEER_LISTPROFILE=dir it writes the CPU profile of the timed
// lists of each measurement to dir, and the heap profile before them.
func BenchmarkPeerList(b *testing.B) {
	klog.SetLogger(logr.Discard())
	peerConfig()
	for _, objects := range []int{peerObjects(), 5 * peerObjects()} {
		for run := 1; run <= peerRuns(); run++ {
			for _, be := range peerOrder(run) {
				b.Run(peerName(fmt.Sprintf("Objects=%d", objects), be.name, run), func(b *testing.B) {
					srv := embedtest.Start(b)
					primePods(b, srv, objects)
					store := be.new(b, srv)
					ctx := context.Background()
					for _, mode := range strings.Split(envString("K8SBENCH_PEER_LISTMODES", "RV=0,RV=consistent,Paged=500"), ",") {
						b.Run(mode, func(b *testing.B) {
							warmUp(b, ctx, store, mode, objects)
							var times []time.Duration
							var each []float64
							var gcs []bool
							lists := max(11, b.N)
							if path := listProfilePath(b, b.Name()); path != "" {
								writeHeapProfile(b, strings.TrimSuffix(path, ".pprof")+".heap")
								defer startCPUProfile(b, path)()
							}
							gcStart, cpuStart, faultStart := readGC(), cpuTime(), minorFaults()
							for range lists {
								before := readGC()
								start := time.Now()
								listAll(b, ctx, store, mode, objects)
								times = append(times, time.Since(start))
								each, gcs = append(each, ms(times[len(times)-1])), append(gcs, before.gcDuring())
							}
							cpu := cpuTime() - cpuStart
							gcStart.report(b, lists)
							b.ReportMetric(float64(minorFaults()-faultStart)/float64(lists), "faults/list")
							b.Logf("ms per list (* a GC cycle ended during it):%s", listTimes(each, gcs))
							slices.Sort(times)
							b.ReportMetric(ms(times[len(times)/2]), "ms/list")
							b.ReportMetric(ms(cpu)/float64(lists), "cpu-ms/list")
						})
					}
				})
			}
		}
	}
}

// warmUpGCs is how many GC cycles the lists before a measurement must
// span, and warmUpMax the most lists warmUp makes to see them.
const warmUpGCs, warmUpMax = 2, 40

// warmUp lists as mode says at least 3 times, and until warmUpGCs GC
// cycles have ended while listing (at most warmUpMax lists), so that the
// heap has grown to the size repeated lists keep it at. Without this the
// cache measured first in a process pays for growing the heap (memory
// fresh from the kernel, a page fault per 4 KiB of a list's items) and
// the one measured after it reuses that memory.
func warmUp(b *testing.B, ctx context.Context, store k8sstorage.Interface, mode string, objects int) {
	start := readGC()
	for i := 0; i < warmUpMax && (i < 3 || readGC().cycles-start.cycles < warmUpGCs); i++ {
		listAll(b, ctx, store, mode, objects)
	}
}

// listAll lists every pod as mode says and checks that it got want.
func listAll(b *testing.B, ctx context.Context, store k8sstorage.Interface, mode string, want int) {
	opts := k8sstorage.ListOptions{Recursive: true, Predicate: k8sstorage.Everything}
	switch mode {
	case "RV=0":
		opts.ResourceVersion = "0"
	case "Paged=500":
		opts.Predicate.Limit = 500
	}
	n := 0
	for {
		list := &example.PodList{}
		if err := store.GetList(ctx, "/pods/", opts, list); err != nil {
			b.Fatal(err)
		}
		n += len(list.Items)
		if list.Continue == "" || opts.Predicate.Limit == 0 {
			if n != want {
				b.Fatalf("%s listed %d pods, want %d", mode, n, want)
			}
			return
		}
		opts.Predicate.Continue = list.Continue
	}
}

func envString(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
