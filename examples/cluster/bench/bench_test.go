package bench

import (
	"context"
	"flag"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	clientv3 "go.etcd.io/etcd/client/v3"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/embedtest"
	"github.com/listwatch/listwatch/examples/cluster/demo"
	"github.com/listwatch/listwatch/examples/cluster/rollout"
	"github.com/listwatch/listwatch/examples/internal/demorun"
	"github.com/listwatch/listwatch/examples/nodelifecycle/api"
	"github.com/listwatch/listwatch/reflector"
)

var (
	flagNodes    = flag.Int("cluster.nodes", 100, "simulated nodes (4 zones)")
	flagReplicas = flag.Int("cluster.replicas", 3000, "replicas of the Deployment")
	flagDelay    = flag.Duration("cluster.startdelay", 0, "time a bound pod takes to become Running (the simulated container start)")
	flagWorkers  = flag.Int("cluster.workers", 5, "concurrent Reconciles per controller (kube-controller-manager's default 5)")
)

// countingKV counts the reads (ranges) and transactions an etcd client
// sends through its KV.
type countingKV struct {
	clientv3.KV
	gets, txns atomic.Int64
}

func (k *countingKV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	k.gets.Add(1)
	return k.KV.Get(ctx, key, opts...)
}

func (k *countingKV) Txn(ctx context.Context) clientv3.Txn {
	k.txns.Add(1)
	return k.KV.Txn(ctx)
}

// startup records, per pod, when the observer's watch first showed it and
// when it first showed it Running.
type startup struct {
	mu      sync.Mutex
	seen    map[string]time.Time
	running map[string]time.Duration
}

func (s *startup) observe(p *corev1.Pod) {
	key := p.Namespace + "/" + p.Name
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	first, ok := s.seen[key]
	if !ok {
		s.seen[key], first = now, now
	}
	if _, done := s.running[key]; !done && p.Status.Phase == corev1.PodRunning {
		s.running[key] = now.Sub(first)
	}
}

// take returns the latencies recorded and starts afresh.
func (s *startup) take() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]time.Duration, 0, len(s.running))
	for _, d := range s.running {
		out = append(out, d)
	}
	s.seen, s.running = map[string]time.Time{}, map[string]time.Duration{}
	slices.Sort(out)
	return out
}

// pct is the p-th percentile of sorted ds.
func pct(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	return ds[min(len(ds)-1, int(float64(len(ds))*p))]
}

// cpuSeconds is the process's user and system CPU time.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// liveHeap is the heap in use after a full collection.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// requests sums apiserver_request_total.
func requests(b *testing.B, reg *prometheus.Registry) float64 {
	mfs, err := reg.Gather()
	if err != nil {
		b.Fatal(err)
	}
	var n float64
	for _, mf := range mfs {
		if mf.GetName() != "apiserver_request_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			n += m.GetCounter().GetValue()
		}
	}
	return n
}

// BenchmarkCluster starts the cluster example with -cluster.nodes
// simulated nodes (etcd, API server, kubelets and scheduler in this
// process; the controller manager, one replica, in a child process of its
// own), creates a Deployment of -cluster.replicas replicas and measures
// the time until every replica is available and each pod's startup
// latency (from the observer's watch showing it created to showing it
// Running; Kubernetes' SLO: p99 <= 5 s); then rolls every pod to a new
// image and measures the same; then counts the API requests and etcd
// reads (ranges) and transactions per pod over both, the controller
// manager's CPU time in each phase and its live heap at the end, and the
// CPU time of everything else (this process).
func BenchmarkCluster(b *testing.B) {
	for range b.N {
		runCluster(b)
	}
}

func runCluster(b *testing.B) {
	nodes, replicas := *flagNodes, *flagReplicas
	if nodes%4 != 0 {
		b.Fatalf("-cluster.nodes (%d) must be a multiple of 4 (zones)", nodes)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	etcd := embedtest.Start(b)
	kv := &countingKV{KV: etcd.Client.KV}
	etcd.Client.KV = kv
	reg := prometheus.NewRegistry()
	o := demo.Options{ClusterOptions: demorun.ClusterOptions{Client: etcd.Client, Prefix: "/registry", Zones: 4,
		NodesPerZone: nodes / 4, Renew: 5 * time.Second, Grace: 40 * time.Second, Monitor: 5 * time.Second,
		StepTimeout: 20 * time.Minute},
		StartDelay: max(*flagDelay, time.Nanosecond), Bookmarks: time.Second,
		LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second,
		Workers: *flagWorkers, Metrics: reg, NoControllerManager: true}
	s, err := demo.Start(ctx, o)
	if err != nil {
		b.Fatal(err)
	}
	defer func() {
		if err := s.Close(); err != nil {
			b.Error(err)
		}
	}()
	// The controller manager runs alone in a child process (one replica,
	// the leader), so that its CPU and heap are its own.
	cm := startChild(b, childOf(s.Options, s.API.URL, etcd.Endpoints))
	defer func() {
		if err := cm.stop(); err != nil {
			b.Errorf("controller manager process: %v", err)
		}
	}()
	st := &startup{seen: map[string]time.Time{}, running: map[string]time.Duration{}}
	h, err := s.View.Pods.AddEventHandler(reflector.ResourceEventHandlerFuncs[*corev1.Pod]{
		AddFunc:    func(p *corev1.Pod, _ bool) { st.observe(p) },
		UpdateFunc: func(_, p *corev1.Pod) { st.observe(p) },
	})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = s.View.Pods.RemoveEventHandler(h) }()

	done := func(image string) bool {
		d, ok := s.View.Deployments.GetIndexer().GetByKey("default/web")
		return ok && rollout.Complete(d, d.Status) && d.Spec.Template.Spec.Containers[0].Image == image
	}
	wait := func(what string, cond func() bool) time.Duration {
		start := time.Now()
		for !cond() {
			if ctx.Err() != nil {
				b.Fatalf("timed out waiting for %s", what)
			}
			time.Sleep(20 * time.Millisecond)
		}
		return time.Since(start)
	}
	reqs0, gets0, txns0 := requests(b, reg), kv.gets.Load(), kv.txns.Load()

	// Scale-up: kubectl create deployment web --replicas=N.
	n := int32(replicas)
	lbl := map[string]string{"app": "web"}
	d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: appsv1.DeploymentSpec{Replicas: &n, Selector: &metav1.LabelSelector{MatchLabels: lbl},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: lbl},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx:1"}}}}}}
	cpu0, cm0 := cpuSeconds(), cm.mark(b)
	start := time.Now()
	if err := s.Client.Create(ctx, api.Deployments, d); err != nil {
		b.Fatal(err)
	}
	wait("every replica available", func() bool { return done("nginx:1") })
	available := time.Since(start)
	cpuUp, cmUp := cpuSeconds()-cpu0, cm.mark(b)
	up := st.take()

	// Rolling update of every pod.
	cpu0 = cpuSeconds()
	start = time.Now()
	if _, err := api.Mutate(ctx, s.Client, api.Deployments, "default", "web", func() *appsv1.Deployment { return &appsv1.Deployment{} },
		func(d *appsv1.Deployment) (bool, error) {
			d.Spec.Template.Spec.Containers[0].Image = "nginx:2"
			return true, nil
		}); err != nil {
		b.Fatal(err)
	}
	wait("the rolling update", func() bool { return done("nginx:2") })
	rolled := time.Since(start)
	cpuRoll, cmRoll := cpuSeconds()-cpu0, cm.mark(b)
	roll := st.take()
	pods := float64(2 * replicas) // created over both phases
	reqs, gets, txns := requests(b, reg)-reqs0, kv.gets.Load()-gets0, kv.txns.Load()-txns0

	b.ReportMetric(available.Seconds(), "all-available-s")
	b.ReportMetric(float64(pct(up, 0.5).Milliseconds()), "startup-p50-ms")
	b.ReportMetric(float64(pct(up, 0.99).Milliseconds()), "startup-p99-ms")
	b.ReportMetric(rolled.Seconds(), "rollout-s")
	b.ReportMetric(float64(pct(roll, 0.5).Milliseconds()), "rollout-startup-p50-ms")
	b.ReportMetric(float64(pct(roll, 0.99).Milliseconds()), "rollout-startup-p99-ms")
	b.ReportMetric(reqs/pods, "api-requests/pod")
	b.ReportMetric(float64(gets)/pods, "etcd-ranges/pod")
	b.ReportMetric(float64(txns)/pods, "etcd-txns/pod")
	b.ReportMetric(cmUp.CPU-cm0.CPU, "cm-cpu-up-s")
	b.ReportMetric(cmRoll.CPU-cmUp.CPU, "cm-cpu-rollout-s")
	b.ReportMetric(float64(cmRoll.Heap)/(1<<20), "cm-heap-MiB")
	b.ReportMetric(cpuUp+cpuRoll, "rest-cpu-s")
	if cmRoll.Created != int64(2*replicas) {
		b.Errorf("the ReplicaSet controller created %d pods for %d replicas of two templates", cmRoll.Created, replicas)
	}
	b.Logf("%d nodes, %d replicas: available in %s (startup p50 %s, p99 %s over %d pods); rollout %s (p50 %s, p99 %s); %.1f requests, %.2f etcd ranges, %.2f txns per pod",
		nodes, replicas, available.Round(time.Millisecond), pct(up, 0.5), pct(up, 0.99), len(up), rolled.Round(time.Millisecond),
		pct(roll, 0.5), pct(roll, 0.99), reqs/pods, float64(gets)/pods, float64(txns)/pods)
}
