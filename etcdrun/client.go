package etcdrun

import (
	"context"
	"crypto/tls"
	"errors"
	"time"

	pb "go.etcd.io/etcd/api/v3/etcdserverpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"

	"github.com/listwatch/listwatch/storage"
)

// Defaults of ClientConfig's zero values.
const (
	// DefaultDialTimeout bounds Connect's first round trip and each
	// connection attempt (TCP, TLS and HTTP/2 handshakes).
	DefaultDialTimeout = 5 * time.Second
	// DefaultKeepAliveTime is how long a connection may be silent before
	// the client pings etcd (gRPC raises anything below 10 s to 10 s).
	DefaultKeepAliveTime = 10 * time.Second
	// DefaultKeepAliveTimeout is how long a ping may go unanswered before
	// the connection is closed as dead (a frozen etcd).
	DefaultKeepAliveTimeout = 5 * time.Second
	// DefaultMaxBackoff caps the wait between reconnect attempts, and so
	// how long requests keep failing after etcd is back.
	DefaultMaxBackoff = time.Second
	// DefaultPingTimeout bounds Ping when its context has no deadline.
	DefaultPingTimeout = 2 * time.Second
)

// ClientConfig configures a client of an etcd cluster. Endpoints is
// required; every other zero value means the documented default.
type ClientConfig struct {
	// Endpoints are the client URLs of the cluster's members.
	Endpoints []string
	// TLS is the client's TLS configuration; nil means TLSFiles, or plain
	// connections when that is nil too.
	TLS *tls.Config
	// TLSFiles are the PEM files of the client certificate and the CA of
	// the members' certificates (used when TLS is nil).
	TLSFiles *TLSFiles
	// Username and Password authenticate to an etcd with auth enabled.
	Username, Password string
	// DialTimeout bounds Connect's first round trip and each connection
	// attempt; 0 means DefaultDialTimeout (5 s).
	DialTimeout time.Duration
	// KeepAliveTime and KeepAliveTimeout: a connection silent for
	// KeepAliveTime is pinged, and closed when the ping is not answered
	// within KeepAliveTimeout; 0 means DefaultKeepAliveTime (10 s) and
	// DefaultKeepAliveTimeout (5 s). Negative KeepAliveTime: no pings.
	KeepAliveTime, KeepAliveTimeout time.Duration
	// MaxBackoff caps the wait between reconnect attempts; 0 means
	// DefaultMaxBackoff (1 s).
	MaxBackoff time.Duration
	// Logger receives the etcd client's own logs; nil discards them.
	Logger *zap.Logger
}

// NewClient returns a client of cfg.Endpoints without waiting for a
// connection: requests wait (within their contexts) until one is up.
// Connect also checks that etcd answers.
func NewClient(cfg ClientConfig) (*clientv3.Client, error) {
	if len(cfg.Endpoints) == 0 {
		return nil, errors.New("etcdrun: ClientConfig.Endpoints is required")
	}
	tlsCfg := cfg.TLS
	if tlsCfg == nil && cfg.TLSFiles != nil {
		c, err := cfg.TLSFiles.ClientConfig()
		if err != nil {
			return nil, err
		}
		tlsCfg = c
	}
	dial := positive(cfg.DialTimeout, DefaultDialTimeout)
	maxBackoff := positive(cfg.MaxBackoff, DefaultMaxBackoff)
	base := min(250*time.Millisecond, maxBackoff)
	cc := clientv3.Config{
		Endpoints: cfg.Endpoints, TLS: tlsCfg, Username: cfg.Username, Password: cfg.Password,
		DialTimeout: dial, Logger: cfg.Logger,
		DialOptions: []grpc.DialOption{grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: base, Multiplier: 1.6, Jitter: 0.2, MaxDelay: maxBackoff},
			MinConnectTimeout: dial,
		})},
	}
	if cfg.KeepAliveTime >= 0 {
		cc.DialKeepAliveTime = positive(cfg.KeepAliveTime, DefaultKeepAliveTime)
		cc.DialKeepAliveTimeout = positive(cfg.KeepAliveTimeout, DefaultKeepAliveTimeout)
	}
	if cc.Logger == nil {
		cc.Logger = zap.NewNop()
	}
	cli, err := clientv3.New(cc)
	if err != nil {
		return nil, storage.NewUnavailableError(cfg.Endpoints, err)
	}
	return cli, nil
}

// Connect is NewClient, then a Ping bounded by ctx and DialTimeout: it
// fails within DialTimeout with a storage.ErrUnavailable error naming the
// endpoints and the last dial error when etcd does not answer.
func Connect(ctx context.Context, cfg ClientConfig) (*clientv3.Client, error) {
	cli, err := NewClient(cfg)
	if err != nil {
		return nil, err
	}
	pctx, cancel := context.WithTimeout(ctx, positive(cfg.DialTimeout, DefaultDialTimeout))
	defer cancel()
	if err := Ping(pctx, cli); err != nil {
		cli.Close()
		return nil, err
	}
	return cli, nil
}

// Ping makes one linearizable read (so a member cut off from its quorum
// fails it too), bounded by ctx, or DefaultPingTimeout when ctx has no
// deadline. Its error is a storage.ErrUnavailable error naming cli's
// endpoints and the dial or RPC error, or ctx's error when ctx was
// canceled. It is the check to give a readiness endpoint.
func Ping(ctx context.Context, cli *clientv3.Client) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, DefaultPingTimeout)
		defer cancel()
	}
	// The gRPC stub rather than cli.KV: clientv3 replaces a deadline's
	// error by the context's, dropping gRPC's "latest balancer error"
	// that names the failed dial.
	_, err := pb.NewKVClient(cli.ActiveConnection()).Range(ctx, &pb.RangeRequest{Key: []byte("health"), CountOnly: true},
		grpc.WaitForReady(true)) // wait out a reconnect in progress
	if err == nil || errors.Is(rpctypes.Error(err), rpctypes.ErrPermissionDenied) {
		return nil // an answer, even a refusal, is a reachable etcd
	}
	if errors.Is(ctx.Err(), context.Canceled) {
		return ctx.Err()
	}
	return storage.NewUnavailableError(cli.Endpoints(), rpctypes.Error(err))
}

func positive(v, def time.Duration) time.Duration {
	if v > 0 {
		return v
	}
	return def
}
