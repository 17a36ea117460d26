package manager

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/listwatch/listwatch/cache"
	"github.com/listwatch/listwatch/client"
)

// Errors of Add and Run; match them with errors.Is.
var (
	// ErrAlreadyStarted is returned by Add after Run was called and by a
	// second Run.
	ErrAlreadyStarted = errors.New("manager: already started")
	// ErrLeadershipLost is returned by Run when this replica was the
	// leader and lost its lease; its leader-only Runnables have stopped.
	ErrLeadershipLost = errors.New("manager: leadership lost")
)

// Runnable is what a Manager runs: a controller.Controller, or anything
// whose Start blocks until ctx ends and then returns once its goroutines
// have ended. An error from Start stops the whole manager.
type Runnable interface {
	Start(ctx context.Context) error
}

// LeaderElectionRunnable is implemented by a Runnable that says whether
// it needs leadership. Runnables without the method need it.
type LeaderElectionRunnable interface {
	NeedLeaderElection() bool
}

// RunnableFunc is a function as a Runnable.
type RunnableFunc func(ctx context.Context) error

// Start calls f.
func (f RunnableFunc) Start(ctx context.Context) error { return f(ctx) }

// Manager runs Runnables (controllers) over a shared informer factory with
// optional leader election, probes and metrics. Create it with New.
type Manager struct {
	name       string
	kinds      *client.Kinds
	backend    backend
	cache      *cache.Cache
	client     client.Client
	election   *LeaderElection // nil: no leader election
	log        *slog.Logger
	leader     leaderGauge
	registerer prometheus.Registerer
	gc         bool // Options.GarbageCollector

	freshTimeout time.Duration // Options.FreshnessTimeout
	freshness    freshnessMetrics

	mu        sync.Mutex
	runnables []Runnable
	state     runState
	runErr    error // why Run returned, once stateStopped
	isLeader  bool
	elected   chan struct{} // closed when the leader-only Runnables start
	leaderKey string        // this replica's election key while leader
	leaderRev int64         // its create revision
	awaiting  bool          // elected, waiting for fresh caches (see awaitFresh)
	freshErr  error         // why those caches are not fresh yet, once an attempt ran out
	healthz   []namedCheck
	readyz    []namedCheck
}

type runState int

const (
	stateNew runState = iota
	stateRunning
	stateStopped
)

// New validates opts, fills in the defaults and returns a Manager. It
// starts nothing; with opts.Registerer it registers the leader-status
// gauge.
func New(opts Options) (*Manager, error) {
	if opts.Name == "" {
		return nil, fmt.Errorf("%w: Name is required", ErrInvalidOptions)
	}
	if opts.FreshnessTimeout < 0 {
		return nil, fmt.Errorf("%w: negative FreshnessTimeout %v", ErrInvalidOptions, opts.FreshnessTimeout)
	}
	m := &Manager{name: opts.Name, kinds: opts.Kinds, log: opts.Logger, registerer: opts.Registerer,
		gc: opts.GarbageCollector, elected: make(chan struct{}), freshTimeout: opts.FreshnessTimeout}
	if m.freshTimeout == 0 {
		m.freshTimeout = DefaultFreshnessTimeout
	}
	if m.log == nil {
		m.log = slog.Default()
	}
	m.log = m.log.With("manager", m.name)
	if m.kinds == nil {
		m.kinds, _ = client.NewKinds() // no scheme: cannot fail
	}
	if opts.LeaderElection != nil {
		le := *opts.LeaderElection
		if le.Client == nil {
			le.Client = opts.Etcd
		}
		le, err := le.withDefaults()
		if err != nil {
			return nil, err
		}
		m.election = &le
	}
	var err error
	switch {
	case opts.Etcd != nil || len(opts.Storage) > 0:
		m.backend, err = newLocalBackend(opts.Etcd, opts.EtcdPrefix, opts.Storage, m.kinds, m.log)
	case opts.ServerURL != "":
		m.backend, err = newHTTPBackend(opts, m.kinds, m.log)
	default:
		m.backend = noBackend{}
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	}
	m.cache, err = cache.New(cache.Options{Kinds: m.kinds, ListerWatcher: m.backend.listerWatcher,
		Logger: m.log, InformerOptions: opts.InformerOptions})
	if err != nil {
		return nil, err
	}
	if c := m.backend.client(); c != nil {
		m.client = client.WithCache(c, m.cache)
	}
	gauge, err := newLeaderGauge(opts.Registerer, m.name, m.identity())
	if err != nil {
		return nil, err
	}
	m.leader = gauge
	if m.freshness, err = newFreshnessMetrics(opts.Registerer, m.name); err != nil {
		return nil, err
	}
	return m, nil
}

// identity is this replica's leader election identity ("" without).
func (m *Manager) identity() string {
	if m.election == nil {
		return ""
	}
	return m.election.Identity
}

// GetClient returns the manager's client: reads of the kinds the cache
// watches come from the cache, everything else from the backend
// (Options.Etcd or Options.ServerURL). It is nil without a backend.
func (m *Manager) GetClient() client.Client { return m.client }

// GetCache returns the manager's cache: one informer per kind, started by
// Run on every replica (a standby keeps warm caches). This is where
// informers are made (GetCache().InformerFor).
func (m *Manager) GetCache() *cache.Cache { return m.cache }

// GetKinds returns the kinds the manager's client and cache know.
func (m *Manager) GetKinds() *client.Kinds { return m.kinds }

// GetLogger returns the manager's logger (with manager=<name>).
func (m *Manager) GetLogger() *slog.Logger { return m.log }

// GetRegisterer returns Options.Registerer (nil when none was given).
func (m *Manager) GetRegisterer() prometheus.Registerer { return m.registerer }

// Name returns the manager's name.
func (m *Manager) Name() string { return m.name }

// Add adds a Runnable; it starts when Run runs and, unless it says
// NeedLeaderElection() == false, only while this replica leads. Add fails
// with ErrAlreadyStarted once Run was called.
func (m *Manager) Add(r Runnable) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.state != stateNew {
		return ErrAlreadyStarted
	}
	m.runnables = append(m.runnables, r)
	return nil
}

// Elected returns a channel closed when this replica's leader-only
// Runnables start: once elected (at once without leader election) and the
// cache is fresh (see Options.FreshnessTimeout).
func (m *Manager) Elected() <-chan struct{} { return m.elected }

// IsLeader reports whether this replica's leader-only Runnables may be
// running now.
func (m *Manager) IsLeader() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.isLeader
}

// LeaderKey returns this replica's election key and its create revision
// while it leads ("" and 0 otherwise, and without leader election). A
// write that must only happen under this leadership can be made
// conditional on it in an etcd transaction
// (clientv3.Compare(clientv3.CreateRevision(key), "=", rev)).
func (m *Manager) LeaderKey() (string, int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.leaderKey, m.leaderRev
}

// Run starts, in order, the backend's cachers (waiting until each has
// loaded its first list), the cache's informers, the Runnables that run
// everywhere, and (once elected, or at once without leader election) the
// leader-only Runnables, and blocks until ctx ends, a Runnable fails, or
// leadership is lost. It then stops them in the reverse order: it cancels
// every Runnable and waits for them to return, stops the informers and
// waits for their goroutines, stops the cachers and closes the stores the
// manager made, and returns: nil when ctx ended, the Runnable's error, or
// an error wrapping ErrLeadershipLost. Run may be called once.
func (m *Manager) Run(ctx context.Context) error {
	if err := m.addGarbageCollector(); err != nil {
		return err
	}
	leaderOnly, everywhere, err := m.begin()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		failOnce sync.Once
		failure  error
	)
	fail := func(err error) {
		failOnce.Do(func() { failure = err })
		cancel()
	}

	m.log.Info("starting", "runnables", len(everywhere)+len(leaderOnly), "leaderElection", m.election != nil)
	defer func() { m.log.Info("stopped", "err", failure) }()
	defer m.backend.stop()
	if err := m.backend.start(ctx); err != nil {
		failure = err
		m.log.Error("storage did not start", "err", err)
		m.end(err)
		return err
	}
	// The informers stop by Shutdown, once the Runnables have returned
	// (not with ctx, under Runnables still removing their handlers).
	m.cache.Start(context.WithoutCancel(ctx))
	m.log.Info("cache started")
	var wg sync.WaitGroup
	wg.Go(func() { m.runGroup(ctx, everywhere, fail) })
	wg.Go(func() {
		if m.election == nil {
			m.lead(ctx, leaderOnly, fail, "", 0)
			return
		}
		if err := m.elect(ctx, leaderOnly, fail); err != nil {
			fail(err)
		}
	})
	<-ctx.Done()
	m.log.Info("stopping: waiting for runnables")
	wg.Wait()
	m.log.Info("runnables stopped; stopping the cache")
	m.cache.Shutdown()
	m.end(failure)
	return failure
}

// begin moves the manager to running and splits its Runnables.
func (m *Manager) begin() (leaderOnly, everywhere []Runnable, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.state != stateNew {
		return nil, nil, ErrAlreadyStarted
	}
	m.state = stateRunning
	for _, r := range m.runnables {
		if ler, ok := r.(LeaderElectionRunnable); ok && !ler.NeedLeaderElection() {
			everywhere = append(everywhere, r)
		} else {
			leaderOnly = append(leaderOnly, r)
		}
	}
	return leaderOnly, everywhere, nil
}

// end records why Run returned.
func (m *Manager) end(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.state, m.runErr = stateStopped, err
}

// lead runs the leader-only Runnables until ctx ends, with the leader
// status set while they may run: once the cache is fresh (awaitFresh).
func (m *Manager) lead(ctx context.Context, rs []Runnable, fail func(error), key string, rev int64) {
	if len(rs) > 0 && !m.awaitFresh(ctx) {
		return
	}
	m.setLeader(true, key, rev)
	defer m.setLeader(false, "", 0)
	m.runGroup(ctx, rs, fail)
}

// setLeader records whether this replica leads; Elected's channel closes
// last, so that whoever it wakes sees the status and the gauge set.
func (m *Manager) setLeader(leader bool, key string, rev int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.isLeader, m.leaderKey, m.leaderRev = leader, key, rev
	m.leader.set(leader)
	if leader {
		select {
		case <-m.elected:
		default:
			close(m.elected)
		}
	}
}

// runnableNames names rs for logs: a controller's Name(), else its type.
func runnableNames(rs []Runnable) []string {
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		if n, ok := r.(interface{ Name() string }); ok {
			out = append(out, n.Name())
			continue
		}
		out = append(out, fmt.Sprintf("%T", r))
	}
	return out
}

// runGroup runs rs until ctx ends and returns when all have returned; an
// error from one is passed to fail.
func (m *Manager) runGroup(ctx context.Context, rs []Runnable, fail func(error)) {
	var wg sync.WaitGroup
	for _, r := range rs {
		wg.Go(func() {
			if err := r.Start(ctx); err != nil {
				m.log.Error("runnable failed", "runnable", runnableNames([]Runnable{r})[0], "err", err)
				fail(fmt.Errorf("manager %q: runnable %T: %w", m.name, r, err))
			}
		})
	}
	wg.Wait()
}
