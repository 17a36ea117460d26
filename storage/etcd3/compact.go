package etcd3

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// DefaultCompactKey is the etcd key compactors coordinate through; it is
// the key Kubernetes API servers use, so a Compactor and an API server on the
// same etcd take turns instead of compacting twice.
const DefaultCompactKey = "compact_rev_key"

// DefaultCompactInterval is the interval used when CompactorConfig.Interval is 0.
const DefaultCompactInterval = 5 * time.Minute

// CompactorConfig configures a Compactor.
type CompactorConfig struct {
	// Client is the etcd client (required). The Compactor does not close it.
	Client *clientv3.Client
	// Interval is the time between compaction rounds, and so the history
	// etcd keeps: at least one interval. 0 means DefaultCompactInterval.
	Interval time.Duration
	// Key is the coordination key; "" means DefaultCompactKey.
	Key string
	// Logger receives the compactor's logs; nil means slog.Default().
	Logger *slog.Logger
}

// Compactor compacts etcd's history periodically. Several compactors (in one
// or many processes) may run against one etcd: every round each does a
// transaction on the version of the coordination key, and only the one whose
// transaction wins compacts, to the revision it recorded one round earlier.
// So history of at least one interval is always kept, and a cluster-wide
// round compacts once.
type Compactor struct {
	client   *clientv3.Client
	interval time.Duration
	key      string
	logger   *slog.Logger

	// mu guards the round state and serialises rounds.
	mu sync.Mutex
	// version is the coordination key's version this compactor last saw.
	version int64
	// rev is the revision observed in the previous round: the next
	// compaction target.
	rev int64
	// compacted is the last revision this compactor compacted to.
	compacted int64
}

// NewCompactor validates cfg and returns a Compactor; call Run to start it.
func NewCompactor(cfg CompactorConfig) (*Compactor, error) {
	if cfg.Client == nil {
		return nil, errors.New("etcd3: CompactorConfig.Client is required")
	}
	if cfg.Interval < 0 {
		return nil, errors.New("etcd3: CompactorConfig.Interval must not be negative")
	}
	c := &Compactor{client: cfg.Client, interval: cfg.Interval, key: cfg.Key, logger: cfg.Logger}
	if c.interval == 0 {
		c.interval = DefaultCompactInterval
	}
	if c.key == "" {
		c.key = DefaultCompactKey
	}
	if c.logger == nil {
		c.logger = slog.Default()
	}
	return c, nil
}

// Run runs a round every interval until ctx is done, then returns nil. It
// does not compact at start-up: the first round only records the revision
// the second round compacts to. Errors of a round are logged and retried
// at the next round.
func (c *Compactor) Run(ctx context.Context) error {
	t := time.NewTicker(c.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if _, err := c.Compact(ctx); err != nil && ctx.Err() == nil {
			c.logger.Warn("etcd compaction round failed", "error", err)
		}
	}
}

// Compact runs one round now: it tries to take the turn (a transaction on
// the coordination key's version) and, if it wins, compacts to the revision
// recorded by the previous round. It returns the revision compacted to, or 0
// if this round did not compact (lost the turn, or first round).
func (c *Compactor) Compact(ctx context.Context) (int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	target := c.rev
	resp, err := c.client.KV.Txn(ctx).
		If(clientv3.Compare(clientv3.Version(c.key), "=", c.version)).
		Then(clientv3.OpPut(c.key, strconv.FormatInt(target, 10))).
		Else(clientv3.OpGet(c.key)).
		Commit()
	if err != nil {
		return 0, err
	}
	c.rev = resp.Header.Revision
	if !resp.Succeeded {
		// Another compactor took this round; catch up with its version.
		if kvs := resp.Responses[0].GetResponseRange().Kvs; len(kvs) > 0 {
			c.version = kvs[0].Version
		} else {
			c.version = 0
		}
		return 0, nil
	}
	c.version++
	if target == 0 {
		return 0, nil
	}
	if _, err := c.client.Compact(ctx, target); err != nil {
		if errors.Is(err, rpctypes.ErrCompacted) {
			// Someone compacted further already: nothing to do.
			return 0, nil
		}
		return 0, err
	}
	c.compacted = target
	c.logger.Info("compacted etcd history", "revision", target)
	return target, nil
}

// LastCompacted returns the last revision this compactor compacted to, 0
// if none.
func (c *Compactor) LastCompacted() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.compacted
}
