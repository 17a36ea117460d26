package controllers

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"

	"github.com/listwatch/listwatch/examples/cluster/scheduling"
	"github.com/listwatch/listwatch/examples/nodelifecycle/api"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/reflector/workqueue"
)

// SchedulerConfig configures a Scheduler.
type SchedulerConfig struct {
	// Client binds pods. Required.
	Client *api.Client
	// Informers read nodes and pods; the caller starts them. Required.
	Informers *api.Informers
	// Binders bounds the binds in flight; 0 means 16.
	Binders int
	// RetryAfter is how long a pod no node fits waits before it is tried
	// again (besides node events); 0 means 1 s.
	RetryAfter time.Duration
	// Logger receives the scheduler's logs; nil means slog.Default().
	Logger *slog.Logger
}

// Scheduler binds pending pods to nodes, one decision at a time, the
// binds in flight: a pod it bound counts on its node at once ("assumed"),
// before the informer shows the binding, so that the next decision does
// not crowd the same node.
type Scheduler struct {
	cfg   SchedulerConfig
	queue *workqueue.RateLimitingQueue[string]

	mu      sync.Mutex
	usage   map[string]scheduling.Usage // by node
	counted map[string]countedPod       // by pod key
	turn    int
}

// countedPod is a pod counted in a node's usage.
type countedPod struct {
	node string
	pod  *corev1.Pod
}

// NewScheduler checks cfg and returns a Scheduler; Run runs it.
func NewScheduler(cfg SchedulerConfig) (*Scheduler, error) {
	if cfg.Client == nil || cfg.Informers == nil {
		return nil, errors.New("scheduler: Client and Informers are required")
	}
	if cfg.Binders <= 0 {
		cfg.Binders = 16
	}
	if cfg.RetryAfter <= 0 {
		cfg.RetryAfter = time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Scheduler{cfg: cfg, usage: map[string]scheduling.Usage{}, counted: map[string]countedPod{}}, nil
}

// podKey is p's namespace/name.
func podKey(p *corev1.Pod) string { return p.Namespace + "/" + p.Name }

// observe updates the usage from an informer's view of p (nil: deleted).
func (s *Scheduler) observe(key string, p *corev1.Pod) {
	if p != nil && p.Spec.NodeName == "" && p.DeletionTimestamp == nil {
		return // pending, or assumed with its bind in flight: counted as assumed
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.counted[key]
	bound := p != nil && p.Spec.NodeName != "" && p.DeletionTimestamp == nil &&
		p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed
	switch {
	case ok && (!bound || c.node != p.Spec.NodeName):
		s.usage[c.node] = s.usage[c.node].Sub(c.pod)
		delete(s.counted, key)
		if bound {
			s.count(key, p.Spec.NodeName, p)
		}
	case !ok && bound:
		s.count(key, p.Spec.NodeName, p)
	}
}

// count adds p to node's usage; s.mu is held.
func (s *Scheduler) count(key, node string, p *corev1.Pod) {
	s.counted[key] = countedPod{node: node, pod: p}
	s.usage[node] = s.usage[node].Add(p)
}

// Run schedules until ctx ends; every goroutine it starts has ended when
// it returns.
func (s *Scheduler) Run(ctx context.Context) error {
	s.queue = workqueue.NewRateLimiting[string](nil, workqueue.Config{})
	inf := s.cfg.Informers
	reg, err := inf.Pods.AddEventHandler(reflector.ResourceEventHandlerFuncs[*corev1.Pod]{
		AddFunc: func(p *corev1.Pod, _ bool) { s.observe(podKey(p), p); s.enqueueIfPending(p) },
		UpdateFunc: func(_, p *corev1.Pod) {
			s.observe(podKey(p), p)
			s.enqueueIfPending(p)
		},
		DeleteFunc: func(p *corev1.Pod, _ bool) { s.observe(podKey(p), nil) },
	})
	if err != nil {
		return err
	}
	defer func() { _ = inf.Pods.RemoveEventHandler(reg) }()
	// A node that changes (becomes Ready, loses a taint) may fit pods
	// that waited: they are retried on their own after RetryAfter.
	if !reflector.WaitForCacheSync(ctx, inf.Pods.HasSynced, inf.Nodes.HasSynced, reg.HasSynced) {
		s.queue.ShutDown()
		return ctx.Err()
	}
	binds := make(chan struct{}, s.cfg.Binders)
	var wg sync.WaitGroup
	wg.Go(func() {
		<-ctx.Done()
		s.queue.ShutDown()
	})
	for {
		key, shutdown := s.queue.Get()
		if shutdown {
			break
		}
		s.scheduleOne(ctx, key, binds, &wg)
	}
	wg.Wait()
	return nil
}

// enqueueIfPending queues p when it waits for a node.
func (s *Scheduler) enqueueIfPending(p *corev1.Pod) {
	if p.Spec.NodeName == "" && p.DeletionTimestamp == nil {
		s.queue.Add(podKey(p))
	}
}

// scheduleOne decides key's node and binds it in the background.
func (s *Scheduler) scheduleOne(ctx context.Context, key string, binds chan struct{}, wg *sync.WaitGroup) {
	defer s.queue.Done(key)
	p, ok := s.cfg.Informers.Pods.GetIndexer().GetByKey(key)
	if !ok || p.Spec.NodeName != "" || p.DeletionTimestamp != nil {
		return
	}
	s.mu.Lock()
	if _, assumed := s.counted[key]; assumed {
		s.mu.Unlock()
		return // bound, the informer has not shown it yet
	}
	node, reasons := scheduling.Pick(s.cfg.Informers.Nodes.GetStore().List(), p, s.usage, s.turn)
	if node != "" {
		s.turn++
		s.count(key, node, p)
	}
	s.mu.Unlock()
	if node == "" {
		s.cfg.Logger.Debug("no node fits", "pod", key, "reasons", reasons)
		s.queue.AddAfter(key, s.cfg.RetryAfter)
		return
	}
	select {
	case binds <- struct{}{}:
	case <-ctx.Done():
		return
	}
	wg.Go(func() {
		defer func() { <-binds }()
		if err := s.bind(ctx, p, node); err != nil {
			s.mu.Lock()
			if c, ok := s.counted[key]; ok && c.node == node {
				s.usage[node] = s.usage[node].Sub(c.pod)
				delete(s.counted, key)
			}
			s.mu.Unlock()
			if !apierrors.IsNotFound(err) && ctx.Err() == nil {
				s.cfg.Logger.Warn("binding failed", "pod", key, "node", node, "err", err)
				s.queue.AddRateLimited(key)
			}
			return
		}
		s.queue.Forget(key)
	})
}

// bind sets p's spec.nodeName, on the condition that p is unchanged since
// it was read (and so still unbound).
func (s *Scheduler) bind(ctx context.Context, p *corev1.Pod, node string) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"resourceVersion": p.ResourceVersion},
		"spec": map[string]any{"nodeName": node}})
	if err != nil {
		return err
	}
	return s.cfg.Client.Patch(ctx, api.Pods, p.Namespace, p.Name, "", types.MergePatchType, patch, nil)
}
