package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/listwatch/listwatch/reflector/workqueue"
)

// Defaults of Options.
const (
	DefaultMaxConcurrentReconciles = 1
	DefaultCacheSyncTimeout        = 2 * time.Minute
)

// Errors returned by New, Watch and Start; match them with errors.Is.
var (
	// ErrInvalidOptions is returned by New for unusable Options.
	ErrInvalidOptions = errors.New("controller: invalid options")
	// ErrAlreadyStarted is returned by a second Start.
	ErrAlreadyStarted = errors.New("controller: already started")
	// ErrStopped is returned by Watch after Start has returned.
	ErrStopped = errors.New("controller: stopped")
	// ErrCacheSyncTimeout is returned by Start when the sources have not
	// synced within Options.CacheSyncTimeout.
	ErrCacheSyncTimeout = errors.New("controller: timed out waiting for caches to sync")
	// ErrReconcilePanic wraps a panic recovered from Reconcile.
	ErrReconcilePanic = errors.New("controller: reconcile panicked")
)

// Options configures a Controller.
type Options struct {
	// Name identifies the controller in logs. Required.
	Name string
	// Reconciler is called for every Request. Required.
	Reconciler Reconciler
	// MaxConcurrentReconciles is the number of workers, that is of
	// Reconciles that may run at once (never two for the same Request).
	// Zero means DefaultMaxConcurrentReconciles (1).
	MaxConcurrentReconciles int
	// CacheSyncTimeout bounds how long Start waits for every source to
	// sync. Zero means DefaultCacheSyncTimeout (2 minutes).
	CacheSyncTimeout time.Duration
	// RateLimiter paces the retries of failed Requests. Nil means
	// workqueue.DefaultControllerRateLimiter.
	RateLimiter workqueue.RateLimiter[Request]
	// Logger receives the controller's logs: every failed Reconcile (with
	// the controller's name, the object and the error) and every recovered
	// panic (with its stack). Nil means slog.Default().
	Logger *slog.Logger
	// Registerer receives the controller's metrics:
	// controller_runtime_reconcile_total{controller,result},
	// controller_runtime_reconcile_errors_total{controller},
	// controller_runtime_reconcile_panics_total{controller},
	// controller_runtime_reconcile_time_seconds{controller}, and, unless
	// Queue.Metrics is set, the work queue's workqueue_* metrics with
	// name=<Name>. Nil records none.
	Registerer prometheus.Registerer
	// RecoverPanic turns a panic in Reconcile into an error (wrapping
	// ErrReconcilePanic) that is retried with backoff. Nil means true;
	// false lets the panic crash the program.
	RecoverPanic *bool
	// Queue configures the work queue (clock and metrics). The zero value
	// uses the wall clock and records no metrics.
	Queue workqueue.Config
}

// Controller runs a Reconciler for the Requests its sources produce, with
// a rate-limited work queue between them: many events for one object fold
// into one Request, a Request is never reconciled twice at once, and failed
// Requests are retried with backoff.
type Controller struct {
	name             string
	reconciler       Reconciler
	workers          int
	cacheSyncTimeout time.Duration
	rateLimiter      workqueue.RateLimiter[Request]
	log              *slog.Logger
	recoverPanic     bool
	queueConfig      workqueue.Config
	metrics          reconcileMetrics

	mu      sync.Mutex
	state   state
	sources []Source                              // every watched source, started or not
	ctx     context.Context                       // Start's context, for Watch while running
	queue   *workqueue.RateLimitingQueue[Request] // created by Start
}

type state int

const (
	stateNew state = iota
	stateRunning
	stateStopped
)

// New validates opts, fills in the defaults and returns a Controller. It
// starts nothing: call Watch, then Start.
func New(opts Options) (*Controller, error) {
	switch {
	case opts.Name == "":
		return nil, fmt.Errorf("%w: Name is required", ErrInvalidOptions)
	case opts.Reconciler == nil:
		return nil, fmt.Errorf("%w: Reconciler is required", ErrInvalidOptions)
	case opts.MaxConcurrentReconciles < 0:
		return nil, fmt.Errorf("%w: MaxConcurrentReconciles %d is negative", ErrInvalidOptions, opts.MaxConcurrentReconciles)
	case opts.CacheSyncTimeout < 0:
		return nil, fmt.Errorf("%w: CacheSyncTimeout %v is negative", ErrInvalidOptions, opts.CacheSyncTimeout)
	}
	c := &Controller{
		name:             opts.Name,
		reconciler:       opts.Reconciler,
		workers:          opts.MaxConcurrentReconciles,
		cacheSyncTimeout: opts.CacheSyncTimeout,
		rateLimiter:      opts.RateLimiter,
		log:              opts.Logger,
		recoverPanic:     opts.RecoverPanic == nil || *opts.RecoverPanic,
		queueConfig:      opts.Queue,
	}
	if c.workers == 0 {
		c.workers = DefaultMaxConcurrentReconciles
	}
	if c.cacheSyncTimeout == 0 {
		c.cacheSyncTimeout = DefaultCacheSyncTimeout
	}
	if c.rateLimiter == nil {
		c.rateLimiter = workqueue.DefaultControllerRateLimiter[Request](opts.Queue.Clock)
	}
	if c.log == nil {
		c.log = slog.Default()
	}
	m, err := newReconcileMetrics(opts.Registerer, opts.Name)
	if err != nil {
		return nil, err
	}
	c.metrics = m
	if opts.Registerer != nil && c.queueConfig.Metrics == nil {
		qm, err := workqueue.NewPrometheusMetrics(opts.Registerer, opts.Name)
		if err != nil {
			return nil, fmt.Errorf("controller %q: %w", opts.Name, err)
		}
		c.queueConfig.Metrics = qm
	}
	c.log = c.log.With("controller", c.name)
	return c, nil
}

// Name returns the controller's name.
func (c *Controller) Name() string { return c.name }

// Watch adds a source. Before Start it is recorded and started by Start;
// on a running controller it is started at once (Start does not wait for
// its sync then). After Start has returned it fails with ErrStopped.
func (c *Controller) Watch(src Source) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch c.state {
	case stateNew:
		c.sources = append(c.sources, src)
		return nil
	case stateRunning:
		if err := src.Start(c.ctx, c.queue); err != nil {
			return fmt.Errorf("controller %q: start source: %w", c.name, err)
		}
		c.sources = append(c.sources, src)
		return nil
	default:
		return fmt.Errorf("controller %q: watch: %w", c.name, ErrStopped)
	}
}

// Start runs the controller until ctx ends. It starts every source, waits
// up to CacheSyncTimeout for all of them to sync (ErrCacheSyncTimeout
// otherwise), then runs MaxConcurrentReconciles workers. When ctx ends it
// stops handing out Requests, waits for the Reconciles in progress to
// return (their ctx is ctx, so they see it cancelled), stops the sources,
// and returns nil. Every goroutine it started has ended when it returns. It
// may be called once (ErrAlreadyStarted otherwise).
func (c *Controller) Start(ctx context.Context) error {
	queue, sources, err := c.begin(ctx)
	if err != nil {
		return err
	}
	defer c.end(queue)

	for _, src := range sources {
		if err := src.Start(ctx, queue); err != nil {
			return fmt.Errorf("controller %q: start source: %w", c.name, err)
		}
	}
	c.log.Info("waiting for caches to sync", "sources", len(sources), "timeout", c.cacheSyncTimeout)
	if err := c.waitForSync(ctx, sources); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return nil // stopped while waiting: not an error
	}

	c.log.Info("starting workers", "workers", c.workers)
	var workers sync.WaitGroup
	for range c.workers {
		workers.Go(func() {
			for c.processNext(ctx, queue) {
			}
		})
	}
	<-ctx.Done()
	c.log.Info("stopping: waiting for reconciles in progress")
	queue.ShutDown()
	workers.Wait()
	c.log.Info("stopped")
	return nil
}

// begin moves the controller to running and creates its queue.
func (c *Controller) begin(ctx context.Context) (*workqueue.RateLimitingQueue[Request], []Source, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state != stateNew {
		return nil, nil, fmt.Errorf("controller %q: %w", c.name, ErrAlreadyStarted)
	}
	c.state = stateRunning
	c.ctx = ctx
	// Created here, not in New: the queue owns a goroutine, and a
	// controller that is never started must not leak it.
	c.queue = workqueue.NewRateLimiting(c.rateLimiter, c.queueConfig)
	return c.queue, append([]Source(nil), c.sources...), nil
}

// end shuts the queue down and stops every source (started ones only
// receive Stop once, here).
func (c *Controller) end(queue *workqueue.RateLimitingQueue[Request]) {
	queue.ShutDown()
	c.mu.Lock()
	c.state = stateStopped
	sources := c.sources
	c.mu.Unlock()
	for _, src := range sources {
		if err := src.Stop(); err != nil {
			c.log.Warn("stopping source failed", "err", err)
		}
	}
}

// syncPollInterval is how often Start checks the sources' HasSynced.
const syncPollInterval = 10 * time.Millisecond

// waitForSync polls every source until all have synced. It returns nil
// when they have or when ctx ends, and an error wrapping
// ErrCacheSyncTimeout when CacheSyncTimeout expires first.
func (c *Controller) waitForSync(ctx context.Context, sources []Source) error {
	timeout := time.NewTimer(c.cacheSyncTimeout)
	defer timeout.Stop()
	tick := time.NewTicker(syncPollInterval)
	defer tick.Stop()
	for {
		synced := 0
		for _, src := range sources {
			if src.HasSynced() {
				synced++
			}
		}
		if synced == len(sources) {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-timeout.C:
			c.log.Error("caches did not sync", "synced", synced, "sources", len(sources))
			return fmt.Errorf("controller %q: %w after %v (%d of %d sources synced)",
				c.name, ErrCacheSyncTimeout, c.cacheSyncTimeout, synced, len(sources))
		case <-tick.C:
		}
	}
}
