package taint

import (
	"context"
	"errors"
	"hash/fnv"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/listwatch/listwatch/examples/nodelifecycle/api"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/reflector/workqueue"
)

// Config configures a Manager.
type Config struct {
	// Client deletes pods. Required.
	Client *api.Client
	// Informers read nodes and pods (indexed by node); the caller starts
	// them. Required.
	Informers *api.Informers
	// Workers is the number of workers node and pod events are sharded
	// over by node name; 0 means 8.
	Workers int
	// Clock times delayed evictions; nil is the wall clock.
	Clock workqueue.Clock
	// OnEvict, when set, is called after each eviction.
	OnEvict func(Eviction)
	// Logger receives the manager's logs; nil discards.
	Logger *slog.Logger
}

// Eviction is one pod deleted by the manager.
type Eviction struct {
	// Time is when the pod was deleted (manager clock).
	Time time.Time
	// Namespace, Pod and Node name the pod and its node.
	Namespace, Pod, Node string
	// Waited is the toleration time the pod had (0: not tolerated).
	Waited time.Duration
}

// item is a unit of work of a shard: a node (Namespace "") or a pod.
type item struct {
	node           string // the shard key
	namespace, pod string // "" for a node item
}

// Manager is the taint manager.
type Manager struct {
	cfg    Config
	clock  workqueue.Clock
	log    *slog.Logger
	shards []*workqueue.Queue[item]
	sched  *scheduler
	// handling counts the items the workers are handling.
	handling atomic.Int64

	mu sync.Mutex
	// handlers are Run's handler registrations, set once they have
	// synced (nil before).
	handlers []pendingCounter
}

// pendingCounter is what Quiet reads of a handler registration.
type pendingCounter interface{ Pending() int64 }

// New checks cfg and returns a Manager; Run runs it.
func New(cfg Config) (*Manager, error) {
	if cfg.Client == nil || cfg.Informers == nil {
		return nil, errors.New("taint: Client and Informers are required")
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 8
	}
	m := &Manager{cfg: cfg, clock: cfg.Clock, log: cfg.Logger}
	if m.clock == nil {
		m.clock = workqueue.RealClock{}
	}
	if m.log == nil {
		m.log = slog.New(slog.DiscardHandler)
	}
	return m, nil
}

// shard returns the index of the worker of node.
func (m *Manager) shard(node string) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(node))
	return int(h.Sum32() % uint32(len(m.shards)))
}

// enqueue hands it to its node's worker.
func (m *Manager) enqueue(it item) { m.shards[m.shard(it.node)].Add(it) }

// Run runs the manager until ctx ends: it registers its handlers on the
// node and pod informers, waits for them to sync, and runs Workers workers
// and the eviction scheduler. Every goroutine it starts has ended when it
// returns.
func (m *Manager) Run(ctx context.Context) error {
	qcfg := workqueue.Config{Clock: m.clock}
	m.shards = make([]*workqueue.Queue[item], m.cfg.Workers)
	for i := range m.shards {
		m.shards[i] = workqueue.New[item](qcfg)
	}
	m.sched = newScheduler(m, qcfg)
	inf := m.cfg.Informers
	nodeReg, err := inf.Nodes.AddEventHandler(reflector.ResourceEventHandlerFuncs[*corev1.Node]{
		AddFunc: func(n *corev1.Node, _ bool) {
			if len(noExecuteTaints(n)) > 0 {
				m.enqueue(item{node: n.Name})
			}
		},
		UpdateFunc: func(old, n *corev1.Node) {
			if !sameTaints(noExecuteTaints(old), noExecuteTaints(n)) {
				m.enqueue(item{node: n.Name})
			}
		},
		DeleteFunc: func(n *corev1.Node, _ bool) { m.enqueue(item{node: n.Name}) },
	})
	if err != nil {
		return err
	}
	defer func() { _ = inf.Nodes.RemoveEventHandler(nodeReg) }()
	podReg, err := inf.Pods.AddEventHandler(reflector.ResourceEventHandlerFuncs[*corev1.Pod]{
		AddFunc: func(p *corev1.Pod, _ bool) {
			if p.Spec.NodeName != "" {
				m.enqueue(item{node: p.Spec.NodeName, namespace: p.Namespace, pod: p.Name})
			}
		},
		UpdateFunc: func(old, p *corev1.Pod) {
			if p.Spec.NodeName != "" && (p.Spec.NodeName != old.Spec.NodeName || !sameTolerations(old, p)) {
				m.enqueue(item{node: p.Spec.NodeName, namespace: p.Namespace, pod: p.Name})
			}
		},
		DeleteFunc: func(p *corev1.Pod, _ bool) { m.sched.cancel(podKey(p.Namespace, p.Name)) },
	})
	if err != nil {
		return err
	}
	defer func() { _ = inf.Pods.RemoveEventHandler(podReg) }()

	var wg sync.WaitGroup
	defer wg.Wait()
	defer func() {
		for _, q := range m.shards {
			q.ShutDown()
		}
		m.sched.shutDown()
	}()
	if !reflector.WaitForCacheSync(ctx, inf.Nodes.HasSynced, inf.Pods.HasSynced, nodeReg.HasSynced, podReg.HasSynced) {
		return nil
	}
	for _, q := range m.shards {
		wg.Go(func() {
			for {
				it, shutdown := q.Get()
				if shutdown {
					return
				}
				m.handling.Add(1)
				m.handle(ctx, it)
				m.handling.Add(-1)
				q.Done(it)
			}
		})
	}
	wg.Go(func() { m.sched.run(ctx) })
	nodePending, okNodes := nodeReg.(pendingCounter)
	podPending, okPods := podReg.(pendingCounter)
	if !okNodes || !okPods {
		return errors.New("taint: the informers' handler registrations do not count pending events")
	}
	m.mu.Lock()
	m.handlers = []pendingCounter{nodePending, podPending}
	m.mu.Unlock()
	<-ctx.Done()
	return nil
}

// Quiet reports whether the manager has done all its work due by its
// clock's current time: no node or pod event is waiting for its handler or
// a worker, and no eviction is due (false before Run has synced). A caller
// stepping a fake clock steps it only when the manager is quiet, so that
// no eviction or cancellation is late on that clock.
//
// An item a worker has just taken from its queue may go unseen for the
// instant before it is counted as handled: then the next call sees it.
func (m *Manager) Quiet() bool {
	m.mu.Lock()
	handlers := m.handlers
	m.mu.Unlock()
	if handlers == nil {
		return false
	}
	for _, h := range handlers {
		if h.Pending() > 0 {
			return false
		}
	}
	for _, q := range m.shards {
		if q.Len() > 0 {
			return false
		}
	}
	return m.handling.Load() == 0 && !m.sched.due(m.clock.Now())
}

// handle processes one node or pod item.
func (m *Manager) handle(ctx context.Context, it item) {
	inf := m.cfg.Informers
	n, nodeOK := inf.Nodes.GetIndexer().GetByKey(it.node)
	var taints []corev1.Taint
	if nodeOK {
		taints = noExecuteTaints(n)
	}
	if it.pod != "" {
		p, ok := inf.Pods.GetIndexer().GetByKey(podKey(it.namespace, it.pod))
		if !ok || p.Spec.NodeName != it.node {
			return // deleted or moved; the pod's own events handle it
		}
		m.processPod(ctx, p, taints)
		return
	}
	pods, err := inf.PodsOnNode(it.node)
	if err != nil {
		m.log.Error("listing pods of node", "node", it.node, "err", err)
		return
	}
	for _, p := range pods {
		m.processPod(ctx, p, taints)
	}
}

// processPod evicts p now, schedules its eviction, or cancels a pending
// one, as its tolerations of taints (its node's NoExecute taints) say.
func (m *Manager) processPod(ctx context.Context, p *corev1.Pod, taints []corev1.Taint) {
	key := podKey(p.Namespace, p.Name)
	if len(taints) == 0 || isDaemonPod(p) {
		m.sched.cancel(key)
		return
	}
	d := tolerationTime(p.Spec.Tolerations, taints)
	switch d {
	case forever:
		m.sched.cancel(key)
	case 0:
		m.sched.cancel(key)
		m.evict(ctx, p.Namespace, p.Name, p.Spec.NodeName, 0)
	default:
		m.sched.schedule(key, p.Spec.NodeName, m.clock.Now().Add(d), d)
		// p was read from the informer before this call: if the pod has
		// been deleted since, its delete handler's cancel may have come
		// before this schedule. The informer removes a pod from its
		// indexer before that handler runs, so a pod no longer there has
		// no eviction to wait for.
		if _, ok := m.cfg.Informers.Pods.GetIndexer().GetByKey(key); !ok {
			m.sched.cancel(key)
		}
	}
}

// evict deletes a pod; it reports false when it must be retried.
func (m *Manager) evict(ctx context.Context, ns, name, node string, waited time.Duration) bool {
	err := m.cfg.Client.Delete(ctx, api.Pods, ns, name)
	if err != nil && !isNotFound(err) {
		m.log.Warn("evicting pod", "pod", ns+"/"+name, "err", err)
		return false
	}
	if err == nil {
		m.log.Info("evicted pod", "pod", ns+"/"+name, "node", node, "waited", waited)
		if m.cfg.OnEvict != nil {
			m.cfg.OnEvict(Eviction{Time: m.clock.Now(), Namespace: ns, Pod: name, Node: node, Waited: waited})
		}
	}
	return true
}

// Pending returns how many evictions are scheduled.
func (m *Manager) Pending() int {
	if m.sched == nil {
		return 0
	}
	return m.sched.len()
}

func podKey(ns, name string) string { return ns + "/" + name }

// sameTaints reports whether a and b hold the same taints in order.
func sameTaints(a, b []corev1.Taint) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Key != b[i].Key || a[i].Value != b[i].Value || a[i].Effect != b[i].Effect {
			return false
		}
	}
	return true
}

// sameTolerations reports whether a and b tolerate alike.
func sameTolerations(a, b *corev1.Pod) bool {
	if len(a.Spec.Tolerations) != len(b.Spec.Tolerations) {
		return false
	}
	for i := range a.Spec.Tolerations {
		if !a.Spec.Tolerations[i].MatchToleration(&b.Spec.Tolerations[i]) ||
			!equalSeconds(a.Spec.Tolerations[i].TolerationSeconds, b.Spec.Tolerations[i].TolerationSeconds) {
			return false
		}
	}
	return true
}

func equalSeconds(a, b *int64) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}
