package simulator

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/examples/nodelifecycle/api"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/reflector/workqueue"
)

// Config configures a Simulator. Zero values take the documented defaults.
type Config struct {
	// Client reaches the API. Required.
	Client *api.Client
	// Zones and NodesPerZone size the cluster. Both at least 1.
	Zones, NodesPerZone int
	// PodsPerNode is how many pods each node runs: one daemon pod, then
	// plain and tolerating pods in turn (pod i, for even i, tolerates for
	// TolerationSeconds×i/2). 0 means none.
	PodsPerNode int
	// Namespace holds the pods; "" means "default".
	Namespace string
	// RenewInterval is how often a heartbeating node renews its lease;
	// 0 means 10 s (the kubelet's default).
	RenewInterval time.Duration
	// LeaseDurationSeconds is written in the leases; 0 means 40.
	LeaseDurationSeconds int32
	// TolerationSeconds is how long the first tolerating pod of each node
	// tolerates an unreachable node; 0 means 30.
	TolerationSeconds int64
	// Workers bounds concurrent requests; 0 means 16.
	Workers int
	// Nodes, when set, is an informer of nodes: a heartbeating node whose
	// NodeReady is not True there posts True again (as a kubelet does
	// when the controller marked it Unknown).
	Nodes reflector.SharedInformer[*corev1.Node]
	// Clock times the renewals and gives the times written in nodes and
	// leases; nil is the wall clock.
	Clock workqueue.Clock
}

// ErrUnknownNode is returned for a node the simulator does not run.
var ErrUnknownNode = errors.New("simulator: unknown node")

// Simulator runs simulated kubelets.
type Simulator struct {
	cfg   Config
	clock workqueue.Clock
	nodes []string          // all node names, zone by zone
	zone  map[string]string // node → zone

	mu        sync.Mutex
	stopped   map[string]bool
	leases    map[string]*coordinationv1.Lease // last stored lease per node
	beats     map[string]time.Time             // last successful renewal per node
	nextRound time.Time                        // when Run's next round is due (zero before Run)
}

// New checks cfg and returns a Simulator; Setup creates its objects and
// Run heartbeats.
func New(cfg Config) (*Simulator, error) {
	if cfg.Client == nil || cfg.Zones < 1 || cfg.NodesPerZone < 1 || cfg.PodsPerNode < 0 {
		return nil, errors.New("simulator: Client, Zones >= 1 and NodesPerZone >= 1 are required")
	}
	if cfg.Namespace == "" {
		cfg.Namespace = "default"
	}
	if cfg.RenewInterval <= 0 {
		cfg.RenewInterval = 10 * time.Second
	}
	if cfg.LeaseDurationSeconds <= 0 {
		cfg.LeaseDurationSeconds = 40
	}
	if cfg.TolerationSeconds <= 0 {
		cfg.TolerationSeconds = 30
	}
	if cfg.Workers <= 0 {
		cfg.Workers = 16
	}
	s := &Simulator{cfg: cfg, clock: cfg.Clock, zone: map[string]string{}, stopped: map[string]bool{},
		leases: map[string]*coordinationv1.Lease{}, beats: map[string]time.Time{}}
	if s.clock == nil {
		s.clock = workqueue.RealClock{}
	}
	for z := range cfg.Zones {
		for j := range cfg.NodesPerZone {
			n := NodeName(z, j)
			s.nodes = append(s.nodes, n)
			s.zone[n] = ZoneName(z)
		}
	}
	return s, nil
}

// Stopped reports whether node's kubelet is stopped (no heartbeats).
func (s *Simulator) Stopped(node string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stopped[node]
}

// Nodes returns the names of all simulated nodes, zone by zone.
func (s *Simulator) Nodes() []string { return append([]string(nil), s.nodes...) }

// ZoneOf returns node's zone ("" for an unknown node).
func (s *Simulator) ZoneOf(node string) string { return s.zone[node] }

// NodesInZone returns the nodes of zone.
func (s *Simulator) NodesInZone(zone string) []string {
	var out []string
	for _, n := range s.nodes {
		if s.zone[n] == zone {
			out = append(out, n)
		}
	}
	return out
}

// Setup creates the nodes (Ready), their leases and their pods.
func (s *Simulator) Setup(ctx context.Context) error {
	return s.forEach(ctx, s.nodes, func(ctx context.Context, n string) error {
		now := s.clock.Now()
		if err := s.cfg.Client.Create(ctx, api.Nodes, newNode(n, s.zone[n], now)); err != nil {
			return fmt.Errorf("simulator: creating node %s: %w", n, err)
		}
		l := newLease(n, s.cfg.LeaseDurationSeconds, now)
		if err := s.cfg.Client.Create(ctx, api.Leases, l); err != nil {
			return fmt.Errorf("simulator: creating lease %s: %w", n, err)
		}
		s.mu.Lock()
		s.leases[n], s.beats[n] = l, now
		s.mu.Unlock()
		for i := range s.cfg.PodsPerNode {
			p := newPod(s.cfg.Namespace, n, i, s.cfg.TolerationSeconds)
			status := p.Status
			if err := s.cfg.Client.Create(ctx, api.Pods, p); err != nil {
				return fmt.Errorf("simulator: creating pod %d of %s: %w", i, n, err)
			}
			// A pod's status is written through /status, as its kubelet
			// posts it; the create kept none.
			p.Status = status
			if err := s.cfg.Client.UpdateStatus(ctx, api.Pods, p); err != nil {
				return fmt.Errorf("simulator: posting the status of pod %d of %s: %w", i, n, err)
			}
		}
		return nil
	})
}

// forEach runs f on every node with at most Config.Workers at a time and
// returns the first error.
func (s *Simulator) forEach(ctx context.Context, nodes []string, f func(context.Context, string) error) error {
	work := make(chan string)
	errs := make(chan error, s.cfg.Workers)
	var wg sync.WaitGroup
	for range s.cfg.Workers {
		wg.Go(func() {
			var first error
			for n := range work {
				if first == nil {
					first = f(ctx, n)
				}
			}
			errs <- first
		})
	}
	for _, n := range nodes {
		select {
		case work <- n:
		case <-ctx.Done():
		}
	}
	close(work)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	return ctx.Err()
}

// Run renews the leases of heartbeating nodes every RenewInterval (and
// posts NodeReady True where the node informer shows otherwise) until ctx
// ends. Renewal failures are retried at the next round; a round that
// overruns skips the rounds it missed, as a time.Ticker drops ticks.
func (s *Simulator) Run(ctx context.Context) error {
	next := s.clock.Now().Add(s.cfg.RenewInterval)
	t := s.clock.NewTimer(s.cfg.RenewInterval)
	defer t.Stop()
	s.setNextRound(next)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
		}
		_ = s.forEach(ctx, s.heartbeating(), s.heartbeat)
		now := s.clock.Now()
		for !next.After(now) {
			next = next.Add(s.cfg.RenewInterval)
		}
		// Re-armed before it is published: Quiet must not hold while the
		// timer is not yet set for the round it announces.
		t.Reset(next.Sub(now))
		s.setNextRound(next)
	}
}

func (s *Simulator) setNextRound(at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.nextRound = at
}

// Quiet reports whether Run has done every round due by its clock's
// current time (false before Run starts). A caller stepping a fake clock
// steps it only when the simulator is quiet, so that no renewal is late on
// that clock.
func (s *Simulator) Quiet() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clock.Now().Before(s.nextRound)
}

// heartbeating returns the nodes whose heartbeats are on.
func (s *Simulator) heartbeating() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, n := range s.nodes {
		if !s.stopped[n] {
			out = append(out, n)
		}
	}
	return out
}

// heartbeat renews node's lease and repairs its NodeReady condition.
func (s *Simulator) heartbeat(ctx context.Context, node string) error {
	if err := s.renew(ctx, node); err != nil {
		return err
	}
	if s.cfg.Nodes == nil {
		return nil
	}
	n, ok := s.cfg.Nodes.GetIndexer().GetByKey(node)
	if ok && !isReady(n) {
		return s.postReady(ctx, node)
	}
	return nil
}

// renew writes node's lease with a fresh renewTime.
func (s *Simulator) renew(ctx context.Context, node string) error {
	s.mu.Lock()
	l := s.leases[node].DeepCopy()
	s.mu.Unlock()
	now := s.clock.Now()
	renew := metav1.NewMicroTime(now)
	l.Spec.RenewTime = &renew
	err := s.cfg.Client.Update(ctx, api.Leases, l)
	if apierrors.IsConflict(err) || apierrors.IsNotFound(err) {
		l, err = api.Mutate(ctx, s.cfg.Client, api.Leases, api.LeaseNamespace, node,
			func() *coordinationv1.Lease { return &coordinationv1.Lease{} },
			func(l *coordinationv1.Lease) (bool, error) { l.Spec.RenewTime = &renew; return true, nil })
	}
	if err != nil {
		return fmt.Errorf("simulator: renewing lease of %s: %w", node, err)
	}
	s.mu.Lock()
	s.leases[node], s.beats[node] = l, now
	s.mu.Unlock()
	return nil
}

// postReady sets node's NodeReady condition to True.
func (s *Simulator) postReady(ctx context.Context, node string) error {
	_, err := api.Mutate(ctx, s.cfg.Client, api.Nodes, "", node, func() *corev1.Node { return &corev1.Node{} },
		func(n *corev1.Node) (bool, error) {
			now := s.clock.Now()
			for i := range n.Status.Conditions {
				c := &n.Status.Conditions[i]
				if c.Type == corev1.NodeReady {
					if c.Status != corev1.ConditionTrue {
						*c = readyCondition(now)
					} else {
						c.LastHeartbeatTime = metav1.NewTime(now)
					}
					return true, nil
				}
			}
			n.Status.Conditions = append([]corev1.NodeCondition{readyCondition(now)}, n.Status.Conditions...)
			return true, nil
		})
	if err != nil {
		return fmt.Errorf("simulator: posting status of %s: %w", node, err)
	}
	return nil
}

// isReady reports whether n's NodeReady condition is True.
func isReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// LastHeartbeat returns when node's lease was last renewed.
func (s *Simulator) LastHeartbeat(node string) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.beats[node]
}

// Stop stops the heartbeats of nodes.
func (s *Simulator) Stop(nodes ...string) error { return s.set(true, nodes) }

// Resume resumes the heartbeats of nodes.
func (s *Simulator) Resume(nodes ...string) error { return s.set(false, nodes) }

// StopAll stops every node's heartbeats.
func (s *Simulator) StopAll() { _ = s.set(true, s.nodes) }

// ResumeAll resumes every node's heartbeats.
func (s *Simulator) ResumeAll() { _ = s.set(false, s.nodes) }

func (s *Simulator) set(stopped bool, nodes []string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range nodes {
		if _, ok := s.zone[n]; !ok {
			return fmt.Errorf("%w: %q", ErrUnknownNode, n)
		}
	}
	for _, n := range nodes {
		s.stopped[n] = stopped
	}
	return nil
}

// HeartbeatNow renews the leases of the heartbeating nodes among nodes at
// once rather than at the next round (the demo uses it to resume without
// waiting a RenewInterval).
func (s *Simulator) HeartbeatNow(ctx context.Context, nodes ...string) error {
	var on []string
	s.mu.Lock()
	for _, n := range nodes {
		if !s.stopped[n] {
			on = append(on, n)
		}
	}
	s.mu.Unlock()
	return s.forEach(ctx, on, s.heartbeat)
}
