package controller

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/listwatch/listwatch/examples/nodelifecycle/api"
	"github.com/listwatch/listwatch/reflector"
	"github.com/listwatch/listwatch/reflector/controller"
	"github.com/listwatch/listwatch/reflector/workqueue"
)

// Config configures a Controller. Zero durations and rates take the
// documented defaults.
type Config struct {
	// Client writes nodes. Required.
	Client *api.Client
	// Informers read nodes and leases; the caller starts them. Required.
	Informers *api.Informers
	// Clock is the controller's clock; nil is the wall clock.
	Clock workqueue.Clock
	// MonitorPeriod is how often node health is checked; 0 means 5 s.
	MonitorPeriod time.Duration
	// GracePeriod is how long a node may go without a heartbeat before
	// its NodeReady becomes Unknown; 0 means 40 s.
	GracePeriod time.Duration
	// TaintPeriod is how often the zone queues are served; 0 means 100 ms.
	TaintPeriod time.Duration
	// Rates are the zone queues' rate rules; the zero value means
	// DefaultRates.
	Rates Rates
	// NoScheduleWorkers is how many workers add and remove NoSchedule
	// taints; 0 means 2.
	NoScheduleWorkers int
	// OnEvent, when set, is called (from the controller's goroutines) for
	// every Event.
	OnEvent func(Event)
	// Logger receives the controller's logs; nil discards.
	Logger *slog.Logger
}

// Controller is the node lifecycle controller.
type Controller struct {
	cfg    Config
	clock  workqueue.Clock
	log    *slog.Logger
	health *healthMap

	mu         sync.Mutex
	queues     map[string]*zoneQueue // by zone
	zoneStates map[string]ZoneState
	// nextMonitor and nextTaint are when Run's next passes are due (zero
	// before Run arms them).
	nextMonitor, nextTaint time.Time
}

// New checks cfg and returns a Controller; Run runs it.
func New(cfg Config) (*Controller, error) {
	if cfg.Client == nil || cfg.Informers == nil {
		return nil, errors.New("controller: Client and Informers are required")
	}
	if cfg.MonitorPeriod <= 0 {
		cfg.MonitorPeriod = 5 * time.Second
	}
	if cfg.GracePeriod <= 0 {
		cfg.GracePeriod = 40 * time.Second
	}
	if cfg.TaintPeriod <= 0 {
		cfg.TaintPeriod = 100 * time.Millisecond
	}
	if cfg.Rates == (Rates{}) {
		cfg.Rates = DefaultRates
	}
	if cfg.NoScheduleWorkers <= 0 {
		cfg.NoScheduleWorkers = 2
	}
	c := &Controller{cfg: cfg, clock: cfg.Clock, log: cfg.Logger, health: newHealthMap(),
		queues: map[string]*zoneQueue{}, zoneStates: map[string]ZoneState{}}
	if c.clock == nil {
		c.clock = workqueue.RealClock{}
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	return c, nil
}

// Run runs the controller until ctx ends: it waits for the node and lease
// informers to sync, then monitors node health every MonitorPeriod and
// serves the zone queues every TaintPeriod, while a controller of the
// reflector/controller package keeps NoSchedule taints in line with
// NodeReady. Every goroutine it starts has ended when it returns.
func (c *Controller) Run(ctx context.Context) error {
	inf := c.cfg.Informers
	if !reflector.WaitForCacheSync(ctx, inf.Nodes.HasSynced, inf.Leases.HasSynced) {
		return ctx.Err()
	}
	ns, err := controller.New(controller.Options{Name: "node-noschedule-taints", Logger: c.log,
		Reconciler: controller.ReconcileFunc(c.reconcileNoSchedule), MaxConcurrentReconciles: c.cfg.NoScheduleWorkers})
	if err != nil {
		return err
	}
	if err := ns.Watch(controller.Kind(inf.Nodes, nil)); err != nil {
		return err
	}
	var wg sync.WaitGroup
	nsErr := make(chan error, 1)
	wg.Go(func() { nsErr <- ns.Start(ctx) })
	defer wg.Wait()

	now := c.clock.Now()
	monitor := c.clock.NewTimer(0)
	defer monitor.Stop()
	taint := c.clock.NewTimer(c.cfg.TaintPeriod)
	defer taint.Stop()
	c.setNext(&c.nextMonitor, now)
	c.setNext(&c.nextTaint, now.Add(c.cfg.TaintPeriod))
	// A timer is re-armed before its next pass is published: Quiet must
	// not hold while a timer is not yet set for the pass it announces.
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-nsErr:
			return err
		case <-monitor.C():
			c.monitor(ctx)
			now := c.clock.Now()
			monitor.Reset(c.cfg.MonitorPeriod)
			c.setNext(&c.nextMonitor, now.Add(c.cfg.MonitorPeriod))
		case <-taint.C():
			c.taintPass(ctx)
			now := c.clock.Now()
			taint.Reset(c.cfg.TaintPeriod)
			c.setNext(&c.nextTaint, now.Add(c.cfg.TaintPeriod))
		}
	}
}

// setNext sets a pass's due time (nextMonitor or nextTaint).
func (c *Controller) setNext(next *time.Time, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	*next = at
}

// Quiet reports whether Run has done the monitor and taint passes due by
// its clock's current time (false before Run arms them). A caller stepping
// a fake clock steps it only when the controller is quiet, so that no pass
// is late on that clock. The NoSchedule taints, which nothing times, are
// not counted.
func (c *Controller) Quiet() bool {
	now := c.clock.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	return now.Before(c.nextMonitor) && now.Before(c.nextTaint)
}

// emit reports e.
func (c *Controller) emit(e Event) {
	c.log.Info("node lifecycle", "event", e.String())
	if c.cfg.OnEvent != nil {
		c.cfg.OnEvent(e)
	}
}

// queue returns zone's queue, creating it at the Normal rate.
func (c *Controller) queue(zone string) *zoneQueue {
	c.mu.Lock()
	defer c.mu.Unlock()
	q := c.queues[zone]
	if q == nil {
		q = newZoneQueue(c.cfg.Rates.Normal)
		c.queues[zone] = q
	}
	return q
}

// ZoneStates returns the zones' current states.
func (c *Controller) ZoneStates() map[string]ZoneState {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]ZoneState, len(c.zoneStates))
	for z, s := range c.zoneStates {
		out[z] = s
	}
	return out
}

// ZoneRate returns zone's queue rate (nodes tainted per second).
func (c *Controller) ZoneRate(zone string) float64 { return c.queue(zone).rate() }

// Queued returns how many nodes of zone wait for their NoExecute taint.
func (c *Controller) Queued(zone string) int { return c.queue(zone).len() }
