package etcd3

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/status"

	"github.com/listwatch/listwatch/storage"
)

// Bounds of the health tracking.
const (
	// DefaultProbeInterval spaces Health.Run's probes while etcd answers.
	DefaultProbeInterval = time.Second
	// DefaultProbeTimeout bounds each probe: a frozen or partitioned etcd
	// (its connection alive, no answer) is detected within
	// DefaultProbeInterval + DefaultProbeTimeout.
	DefaultProbeTimeout = 2 * time.Second
	// firstReminder is how long etcd is down before Run first logs that it
	// still is (then after twice as long, and so on).
	firstReminder = 10 * time.Second
	// downProbeInterval spaces the probes while etcd is down, so that
	// requests stop failing fast soon after it answers again.
	downProbeInterval = 250 * time.Millisecond
	// readinessFreshness is how long the outcome of a request stands for
	// Check, without Run, before it probes etcd itself.
	readinessFreshness = time.Second
	// readinessProbeTimeout bounds Check's own probe (without Run).
	readinessProbeTimeout = DefaultProbeTimeout
	// backoffResetInterval spaces the requests to reconnect at once while
	// etcd is unreachable: with a client whose reconnect backoff has grown
	// long (gRPC's own reaches 2 min), requests would keep failing that
	// long after etcd is back.
	backoffResetInterval = 500 * time.Millisecond
)

// Health tracks whether etcd answers one client: from the outcome of every
// request of the stores that share it (Config.Health) and, while Run runs,
// from a background probe (a linearizable read with a short deadline), so
// that a dead, frozen or partitioned etcd is noticed within seconds with
// or without traffic. It logs each change once (lost, with the endpoints
// and the error; restored, with how long it was lost) and, under Run, that
// etcd is still lost after 10 s, 20 s, 40 s, ...
//
// While etcd is known down, requests fail at once with a
// storage.ErrUnavailable error (503 with Retry-After: they were never
// sent), instead of each waiting for its timeout: when the client has no
// connection up, or, while Run runs, when the last probe got no answer
// (a frozen etcd keeps its connection up). Run's probes, closer together
// while etcd is down, lift that as soon as etcd answers again.
type Health struct {
	client        *clientv3.Client
	log           *slog.Logger
	probeInterval time.Duration
	probeTimeout  time.Duration

	mu        sync.Mutex // guards the fields below
	down      bool
	probedOut bool          // Run's last probe got no answer (cleared by any answer)
	running   bool          // Run is probing
	reminder  time.Duration // Run logs "still unavailable" once down this long (see remind)
	since     time.Time     // when down last changed
	lastErr   *storage.Error
	observed  time.Time // the last outcome
	lastReset time.Time // the last ResetConnectBackoff

	probeMu sync.Mutex // one on-demand probe at a time
}

// HealthConfig configures a Health. The zero value is usable.
type HealthConfig struct {
	// ProbeInterval spaces Run's probes while etcd answers; 0 means
	// DefaultProbeInterval.
	ProbeInterval time.Duration
	// ProbeTimeout bounds each probe; 0 means DefaultProbeTimeout.
	ProbeTimeout time.Duration
	// Logger receives the loss and the return of etcd, once each; nil
	// means slog.Default().
	Logger *slog.Logger
}

// NewHealth returns the Health of client; call Run to probe etcd in the
// background. Stores built without one make their own (which only
// requests and ReadinessCheck feed).
func NewHealth(client *clientv3.Client, cfg HealthConfig) *Health {
	h := &Health{client: client, log: cfg.Logger, probeInterval: cfg.ProbeInterval, probeTimeout: cfg.ProbeTimeout,
		since: time.Now()}
	if h.log == nil {
		h.log = slog.Default()
	}
	if h.probeInterval <= 0 {
		h.probeInterval = DefaultProbeInterval
	}
	if h.probeTimeout <= 0 {
		h.probeTimeout = DefaultProbeTimeout
	}
	return h
}

// Run probes etcd every probe interval (more often while it is down) until
// ctx is done. Run at most once at a time.
func (h *Health) Run(ctx context.Context) {
	h.mu.Lock()
	h.running = true
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		h.running, h.probedOut = false, false
		h.mu.Unlock()
	}()
	t := time.NewTimer(0)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		h.probe(ctx)
		h.remind()
		next := h.probeInterval
		if h.isDown() {
			next = min(next, downProbeInterval)
		}
		t.Reset(next)
	}
}

// probe makes one linearizable read bounded by the probe timeout and
// records its outcome. It bypasses failFast (it is what lifts it).
func (h *Health) probe(ctx context.Context) {
	if h.isDown() {
		if conn := h.client.ActiveConnection(); conn != nil {
			conn.ResetConnectBackoff()
		}
	}
	pctx, cancel := context.WithTimeout(ctx, h.probeTimeout)
	defer cancel()
	_, err := h.client.Get(pctx, "health", clientv3.WithCountOnly())
	switch {
	case err == nil:
		h.answered()
	case ctx.Err() != nil:
		// Run is stopping: no news of etcd.
	case pctx.Err() != nil || unreachableErr(err):
		cause := err
		if pctx.Err() != nil {
			cause = fmt.Errorf("no answer to a probe within %v", h.probeTimeout)
			if dial := dialError(h.client); dial != nil {
				cause = fmt.Errorf("%w; last dial error: %w", cause, dial)
			}
		}
		h.mu.Lock()
		h.probedOut = true
		h.mu.Unlock()
		h.lost(cause)
	default:
		h.answered() // etcd answered, with an error
	}
}

// remind logs, while etcd stays down, that it still is: when it has been
// down firstReminder, then each time that doubles, so that an operator
// reading the recent log of an idle server sees the outage without
// scrolling back to its start, and a long outage costs a few lines.
func (h *Health) remind() {
	h.mu.Lock()
	down, since := h.down, h.since
	due := h.reminder
	if !down {
		h.reminder = 0
		h.mu.Unlock()
		return
	}
	if due == 0 {
		due = firstReminder
	}
	lasting := time.Since(since)
	if lasting < due {
		h.reminder = due
		h.mu.Unlock()
		return
	}
	h.reminder = 2 * due
	h.mu.Unlock()
	h.log.Warn("etcd is still unavailable", "endpoints", h.client.Endpoints(), "for", lasting.Round(time.Second))
}

func (h *Health) isDown() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.down
}

// Check reports whether etcd answers: nil, or the storage.ErrUnavailable
// error of its loss. While Run runs it is the probes' (and requests')
// latest news; otherwise it is the last outcome when younger than a
// second, else the outcome of a probe of its own (bounded by 2 s and
// timeout when shorter, one at a time).
func (h *Health) Check() error { return h.check(readinessProbeTimeout) }

func (h *Health) check(timeout time.Duration) error {
	h.mu.Lock()
	running, down, last := h.running, h.down, h.lastErr
	h.mu.Unlock()
	if running {
		if down {
			return last
		}
		return nil
	}
	if err, ok := h.recent(); ok {
		return err
	}
	if err := h.failFast(); err != nil {
		return err
	}
	h.probeMu.Lock()
	defer h.probeMu.Unlock()
	if err, ok := h.recent(); ok {
		return err // a concurrent probe or request answered meanwhile
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	_, err := h.client.Get(ctx, "health", clientv3.WithCountOnly())
	_ = h.observe(context.Background(), ctx, timeout, false, false, err)
	err, _ = h.recent()
	return err
}

// recent returns the last outcome, and whether it is recent enough to
// stand for readiness.
func (h *Health) recent() (error, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	fresh := !h.observed.IsZero() && time.Since(h.observed) < readinessFreshness
	if h.down {
		return h.lastErr, fresh
	}
	return nil, fresh
}

// failFast returns the last ErrUnavailable error when etcd is known down
// and either the client has no connection up or Run's last probe got no
// answer; else nil (make the request). At most every backoffResetInterval
// it refreshes that error with the client's last dial error and asks the
// client to reconnect now.
func (h *Health) failFast() error {
	h.mu.Lock()
	down, probedOut, last := h.down, h.probedOut, h.lastErr
	h.mu.Unlock()
	if !down {
		return nil
	}
	disconnected := h.disconnected()
	if !disconnected && !probedOut {
		return nil
	}
	var err error = last
	if disconnected && h.resetDue() {
		if dial := dialError(h.client); dial != nil {
			err = h.lost(dial)
		}
		if conn := h.client.ActiveConnection(); conn != nil {
			conn.ResetConnectBackoff()
		}
	}
	return err
}

// disconnected: the client's connection is in TRANSIENT_FAILURE (its last
// attempt to connect failed) or shut down.
func (h *Health) disconnected() bool {
	conn := h.client.ActiveConnection()
	if conn == nil {
		return true
	}
	st := conn.GetState()
	return st == connectivity.TransientFailure || st == connectivity.Shutdown
}

// ready: the client's connection is up (READY).
func (h *Health) ready() bool {
	conn := h.client.ActiveConnection()
	return conn != nil && conn.GetState() == connectivity.Ready
}

// resetDue: backoffResetInterval has passed since it last said so.
func (h *Health) resetDue() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := time.Now()
	if now.Sub(h.lastReset) < backoffResetInterval {
		return false
	}
	h.lastReset = now
	return true
}

// observe classifies err, the outcome of a request made with rctx (a
// child of ctx bounded by timeout), records it and returns the error to
// give the caller. When etcd did not answer: a write that was, or may have
// been, sent gets a storage.NewOutcomeUnknownError (504 without
// Retry-After: a retry could apply it twice); a read, or a write that
// provably never left, an ErrUnavailable error (503 with Retry-After). A
// write provably never left when etcd refused it (no leader, stopped), or
// when the client had no connection up when it was made (sentNotReady) and
// still has none, its last dial having failed. Any other err is returned
// unchanged.
func (h *Health) observe(ctx, rctx context.Context, timeout time.Duration, write, sentNotReady bool, err error) error {
	switch {
	case err == nil:
		h.answered()
		return nil
	case ctx.Err() != nil:
		return err // the caller's deadline or cancellation: no news of etcd
	case rctx.Err() != nil:
		cause := fmt.Errorf("no answer within %v", timeout)
		dial := dialError(h.client)
		if dial != nil {
			cause = fmt.Errorf("%w; last dial error: %w", cause, dial)
		}
		uerr := h.lost(cause)
		if write && !(sentNotReady && dial != nil) {
			return storage.NewOutcomeUnknownError(h.client.Endpoints(), cause)
		}
		return uerr
	case unreachableErr(err):
		uerr := h.lost(err)
		if write && !neverSent(err, sentNotReady && h.disconnected()) {
			return storage.NewOutcomeUnknownError(h.client.Endpoints(), err)
		}
		return uerr
	case status.Code(err) == codes.Canceled:
		return err // the client is closing
	}
	h.answered() // etcd answered, with an error
	return err
}

// neverSent: a request that failed with err (one unreachableErr accepts)
// provably was not applied: etcd refused it (no leader, stopped,
// unhealthy), or it failed Unavailable with no connection up before and
// after it.
func neverSent(err error, disconnected bool) bool {
	if errors.Is(err, rpctypes.ErrNoLeader) || errors.Is(err, rpctypes.ErrStopped) || errors.Is(err, rpctypes.ErrUnhealthy) {
		return true
	}
	return disconnected && status.Code(err) == codes.Unavailable
}

// lost records that etcd did not answer (cause) and returns the error
// requests fail with meanwhile.
func (h *Health) lost(cause error) *storage.Error {
	uerr := storage.NewUnavailableError(h.client.Endpoints(), cause)
	h.mu.Lock()
	now := time.Now()
	wasDown := h.down
	h.down, h.lastErr, h.observed = true, uerr, now
	if !wasDown {
		h.since = now
	}
	h.mu.Unlock()
	if !wasDown {
		h.log.Warn("etcd is unavailable", "endpoints", h.client.Endpoints(), "err", cause)
	}
	return uerr
}

// answered records that etcd answered.
func (h *Health) answered() {
	h.mu.Lock()
	now := time.Now()
	wasDown, since := h.down, h.since
	h.down, h.probedOut, h.lastErr, h.observed = false, false, nil, now
	if wasDown {
		h.since = now
	}
	h.mu.Unlock()
	if wasDown {
		h.log.Info("etcd is available again", "endpoints", h.client.Endpoints(),
			"unavailableFor", now.Sub(since).Round(time.Millisecond))
	}
}

// unreachableErr: err says etcd could not serve the request (no
// connection, no leader), as opposed to an answer such as "compacted".
func unreachableErr(err error) bool {
	if c := status.Code(err); c == codes.Unavailable || c == codes.DeadlineExceeded {
		return true
	}
	return errors.Is(err, rpctypes.ErrNoLeader) || errors.Is(err, rpctypes.ErrStopped) ||
		errors.Is(err, rpctypes.ErrTimeoutDueToLeaderFail) || errors.Is(err, rpctypes.ErrTimeoutDueToConnectionLost) ||
		errors.Is(err, rpctypes.ErrUnhealthy)
}

// dialErrorWait bounds dialError's probe.
const dialErrorWait = 100 * time.Millisecond

// dialError returns the error of cli's last failed attempt to connect to
// etcd while it has no connection up (gRPC's "connection error: ...
// connection refused"), or nil while a connection is up or being made.
// clientv3 replaces a deadline's error by the context's, dropping gRPC's
// own that names the failed dial; so this asks the gRPC stub directly, with
// a request that fails at once without a connection (not waiting for one),
// or waits at most dialErrorWait.
func dialError(cli *clientv3.Client) error {
	conn := cli.ActiveConnection()
	if conn == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), dialErrorWait)
	defer cancel()
	_, err := pb.NewKVClient(conn).Range(ctx, &pb.RangeRequest{Key: []byte("health"), CountOnly: true,
		Serializable: true}, grpc.WaitForReady(false))
	if status.Code(err) == codes.Unavailable {
		return err
	}
	return nil
}
