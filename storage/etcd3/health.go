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

// Bounds of the availability tracking.
const (
	// readinessFreshness is how long the outcome of a request stands for
	// ReadinessCheck before it probes etcd itself.
	readinessFreshness = time.Second
	// readinessProbeTimeout bounds ReadinessCheck's probe (and the
	// request timeout bounds it too, when shorter).
	readinessProbeTimeout = 2 * time.Second
	// backoffResetInterval spaces the store's requests to reconnect at
	// once while etcd is unreachable: with a client whose reconnect
	// backoff has grown long (gRPC's own reaches 2 min), requests would
	// keep failing that long after etcd is back.
	backoffResetInterval = 500 * time.Millisecond
)

// availability tracks whether etcd answers the store, from the outcome of
// every request the store makes and of ReadinessCheck's probes, and logs
// each change once (lost, with the endpoints and the error; restored, with
// how long it was lost). While etcd is known to be unreachable and the
// client has no connection up, requests fail at once with the last
// ErrUnavailable error instead of waiting for their timeout.
type availability struct {
	client *clientv3.Client
	log    *slog.Logger

	mu        sync.Mutex // guards the fields below
	down      bool
	since     time.Time // when down last changed
	lastErr   *storage.Error
	observed  time.Time // the last outcome
	lastReset time.Time // the last ResetConnectBackoff

	probeMu sync.Mutex // one readiness probe at a time
}

func newAvailability(client *clientv3.Client, log *slog.Logger) *availability {
	return &availability{client: client, log: log, since: time.Now()}
}

// failFast returns the last ErrUnavailable error when etcd is known to be
// unreachable and the client has no connection up, else nil (make the
// request). At most every backoffResetInterval it refreshes that error
// with the client's last dial error and asks the client to reconnect now.
func (a *availability) failFast() error {
	a.mu.Lock()
	down, last := a.down, a.lastErr
	a.mu.Unlock()
	if !down || !a.disconnected() {
		return nil
	}
	var err error = last
	if a.resetDue() {
		if dial := dialError(a.client); dial != nil {
			err = a.unreachable(dial)
		}
		if conn := a.client.ActiveConnection(); conn != nil {
			conn.ResetConnectBackoff()
		}
	}
	return err
}

// disconnected: the client's connection is in TRANSIENT_FAILURE (its last
// attempt to connect failed) or shut down.
func (a *availability) disconnected() bool {
	conn := a.client.ActiveConnection()
	if conn == nil {
		return true
	}
	st := conn.GetState()
	return st == connectivity.TransientFailure || st == connectivity.Shutdown
}

// resetDue: backoffResetInterval has passed since it last said so.
func (a *availability) resetDue() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	now := time.Now()
	if now.Sub(a.lastReset) < backoffResetInterval {
		return false
	}
	a.lastReset = now
	return true
}

// observe classifies err, the outcome of a request made with rctx (a
// child of ctx bounded by timeout), records it and returns the error to
// give the caller: an ErrUnavailable error naming the endpoints and the
// last dial or RPC error when etcd did not answer, else err unchanged.
func (a *availability) observe(ctx, rctx context.Context, timeout time.Duration, err error) error {
	switch {
	case err == nil:
		a.answered()
		return nil
	case ctx.Err() != nil:
		return err // the caller's deadline or cancellation: no news of etcd
	case rctx.Err() != nil:
		cause := fmt.Errorf("no answer within %v", timeout)
		if dial := dialError(a.client); dial != nil {
			cause = fmt.Errorf("%w; last dial error: %w", cause, dial)
		}
		return a.unreachable(cause)
	case unreachableErr(err):
		return a.unreachable(err)
	case status.Code(err) == codes.Canceled:
		return err // the client is closing
	}
	a.answered() // etcd answered, with an error
	return err
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

// unreachable records that etcd did not answer and returns the error.
func (a *availability) unreachable(cause error) error {
	uerr := storage.NewUnavailableError(a.client.Endpoints(), cause)
	a.mu.Lock()
	now := time.Now()
	wasDown := a.down
	a.down, a.lastErr, a.observed = true, uerr, now
	if !wasDown {
		a.since = now
	}
	a.mu.Unlock()
	if !wasDown {
		a.log.Warn("etcd is unavailable", "endpoints", a.client.Endpoints(), "err", cause)
	}
	return uerr
}

// answered records that etcd answered.
func (a *availability) answered() {
	a.mu.Lock()
	now := time.Now()
	wasDown, since := a.down, a.since
	a.down, a.lastErr, a.observed = false, nil, now
	if wasDown {
		a.since = now
	}
	a.mu.Unlock()
	if wasDown {
		a.log.Info("etcd is available again", "endpoints", a.client.Endpoints(),
			"unavailableFor", now.Sub(since).Round(time.Millisecond))
	}
}

// check is ReadinessCheck's answer: the last outcome when it is younger
// than readinessFreshness, the last error at once while etcd is known down
// and the client has no connection, else the outcome of probe (a bounded
// request whose outcome observe records), one probe at a time.
func (a *availability) check(probe func(ctx context.Context) error) error {
	if err, ok := a.recent(); ok {
		return err
	}
	if err := a.failFast(); err != nil {
		return err
	}
	a.probeMu.Lock()
	defer a.probeMu.Unlock()
	if err, ok := a.recent(); ok {
		return err // a concurrent probe or request answered meanwhile
	}
	_ = probe(context.Background()) // its outcome is recorded by observe
	err, _ := a.recent()
	return err
}

// recent returns the last outcome, and whether it is recent enough to
// stand for readiness.
func (a *availability) recent() (error, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	fresh := !a.observed.IsZero() && time.Since(a.observed) < readinessFreshness
	if a.down {
		return a.lastErr, fresh
	}
	return nil, fresh
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
