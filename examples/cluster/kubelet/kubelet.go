// Package kubelet simulates the pod half of kubelets for the cluster
// example (examples/nodelifecycle/simulator keeps the node half: nodes,
// heartbeats, leases): a pod bound to a node whose kubelet runs becomes
// Running and Ready after a configurable delay, written to its /status
// as a kubelet writes it. There are no containers: the delay stands for
// pulling images and starting them, and an image tagged BrokenTag fails
// to pull (the pod stays Pending, never Ready).
package kubelet

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/examples/nodelifecycle/api"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/reflector/workqueue"
)

// Config configures the Kubelets.
type Config struct {
	// Client writes pod status. Required.
	Client *api.Client
	// Informers read pods (indexed by node); the caller starts them.
	// Required.
	Informers *api.Informers
	// StartDelay is how long a bound pod takes to become Running and
	// Ready; 0 means at once.
	StartDelay time.Duration
	// Running reports whether node's kubelet runs; a stopped kubelet
	// starts nothing. Nil: every kubelet runs.
	Running func(node string) bool
	// Workers bounds the status writes in flight; 0 means 16.
	Workers int
	// Logger receives failures; nil means slog.Default().
	Logger *slog.Logger
}

// Kubelets start the pods bound to simulated nodes.
type Kubelets struct {
	cfg   Config
	queue *workqueue.RateLimitingQueue[string]
	// Started counts the pods they marked Running.
	Started atomic.Int64
}

// New checks cfg and returns the Kubelets; Run runs them.
func New(cfg Config) (*Kubelets, error) {
	if cfg.Client == nil || cfg.Informers == nil {
		return nil, errors.New("kubelet: Client and Informers are required")
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 16
	}
	if cfg.Running == nil {
		cfg.Running = func(string) bool { return true }
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Kubelets{cfg: cfg}, nil
}

// Run starts pods until ctx ends; every goroutine it starts has ended
// when it returns.
func (k *Kubelets) Run(ctx context.Context) error {
	k.queue = workqueue.NewRateLimiting[string](nil, workqueue.Config{})
	pending := func(p *corev1.Pod) {
		if p.Spec.NodeName != "" && p.DeletionTimestamp == nil && p.Status.Phase != corev1.PodRunning &&
			p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			k.queue.AddAfter(p.Namespace+"/"+p.Name, k.cfg.StartDelay)
		}
	}
	reg, err := k.cfg.Informers.Pods.AddEventHandler(reflector.ResourceEventHandlerFuncs[*corev1.Pod]{
		AddFunc:    func(p *corev1.Pod, _ bool) { pending(p) },
		UpdateFunc: func(_, p *corev1.Pod) { pending(p) },
	})
	if err != nil {
		return err
	}
	defer func() { _ = k.cfg.Informers.Pods.RemoveEventHandler(reg) }()
	var wg sync.WaitGroup
	wg.Go(func() {
		<-ctx.Done()
		k.queue.ShutDown()
	})
	for range k.cfg.Workers {
		wg.Go(func() {
			for {
				key, shutdown := k.queue.Get()
				if shutdown {
					return
				}
				k.start(ctx, key)
				k.queue.Done(key)
			}
		})
	}
	wg.Wait()
	return nil
}

// start marks key Running and Ready, when it is bound to a running
// kubelet and not yet started.
func (k *Kubelets) start(ctx context.Context, key string) {
	p, ok := k.cfg.Informers.Pods.GetIndexer().GetByKey(key)
	if !ok || p.Spec.NodeName == "" || p.DeletionTimestamp != nil || p.Status.Phase == corev1.PodRunning {
		k.queue.Forget(key)
		return
	}
	if !k.cfg.Running(p.Spec.NodeName) {
		k.queue.Forget(key) // its node is down: the pod waits for eviction
		return
	}
	next := p.DeepCopy()
	next.Status = RunningStatus(p, time.Now())
	if image, bad := brokenImage(p); bad {
		if p.Status.Phase == corev1.PodPending && len(p.Status.ContainerStatuses) > 0 {
			k.queue.Forget(key) // already reported
			return
		}
		next.Status = PullFailedStatus(p, image, time.Now())
	}
	err := k.cfg.Client.UpdateStatus(ctx, api.Pods, next)
	switch {
	case err == nil:
		k.Started.Add(1)
		k.queue.Forget(key)
	case apierrors.IsNotFound(err), ctx.Err() != nil:
		k.queue.Forget(key)
	case apierrors.IsConflict(err):
		k.queue.AddRateLimited(key) // changed since read: the event re-queues it too
	default:
		k.cfg.Logger.Warn("kubelet: pod status not written", "pod", key, "node", p.Spec.NodeName, "err", err)
		k.queue.AddRateLimited(key)
	}
}

// BrokenTag marks images that cannot be pulled: a pod with one stays
// Pending with ErrImagePull (and never becomes Ready), as a typo in an
// image does on a real node.
const BrokenTag = ":broken"

// brokenImage returns p's first image with BrokenTag.
func brokenImage(p *corev1.Pod) (string, bool) {
	for _, c := range p.Spec.Containers {
		if strings.HasSuffix(c.Image, BrokenTag) {
			return c.Image, true
		}
	}
	return "", false
}

// PullFailedStatus is the status a kubelet posts for p when image cannot
// be pulled: Pending, not Ready, the container waiting with ErrImagePull.
func PullFailedStatus(p *corev1.Pod, image string, now time.Time) corev1.PodStatus {
	t := metav1.NewTime(now)
	s := corev1.PodStatus{Phase: corev1.PodPending, StartTime: &t, HostIP: "192.168.0.1", QOSClass: corev1.PodQOSBestEffort,
		Conditions: []corev1.PodCondition{
			{Type: corev1.PodScheduled, Status: corev1.ConditionTrue, LastTransitionTime: t},
			{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "ContainersNotReady", LastTransitionTime: t}}}
	for _, c := range p.Spec.Containers {
		s.ContainerStatuses = append(s.ContainerStatuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image,
			State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull",
				Message: fmt.Sprintf("failed to pull image %q: not found", image)}}})
	}
	return s
}

// RunningStatus is the status a kubelet posts for p once its containers
// run: phase Running, every condition True, a pod IP derived from its
// name, each container started and ready.
func RunningStatus(p *corev1.Pod, now time.Time) corev1.PodStatus {
	t := metav1.NewTime(now)
	h := fnv.New32a()
	_, _ = h.Write([]byte(p.Namespace + "/" + p.Name))
	ip := fmt.Sprintf("10.%d.%d.%d", 100+h.Sum32()%100, (h.Sum32()>>8)&0xff, 1+(h.Sum32()>>16)%254)
	s := corev1.PodStatus{Phase: corev1.PodRunning, StartTime: &t, PodIP: ip, PodIPs: []corev1.PodIP{{IP: ip}},
		HostIP: "192.168.0.1", QOSClass: corev1.PodQOSBestEffort}
	for _, c := range []corev1.PodConditionType{corev1.PodScheduled, corev1.PodInitialized, corev1.ContainersReady, corev1.PodReady} {
		s.Conditions = append(s.Conditions, corev1.PodCondition{Type: c, Status: corev1.ConditionTrue, LastTransitionTime: t})
	}
	yes := true
	for _, c := range p.Spec.Containers {
		s.ContainerStatuses = append(s.ContainerStatuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image,
			ImageID: "sim://" + c.Image, Ready: true, Started: &yes,
			State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: t}}})
	}
	return s
}
