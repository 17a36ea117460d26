package manager

import (
	"context"
	"errors"
	"fmt"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// ErrNoLeader is returned by CurrentLeader when no candidate holds the
// election.
var ErrNoLeader = errors.New("manager: no leader")

// Leader is the candidate that holds a leader election.
type Leader struct {
	// Identity is the value the leader published (LeaderElection.Identity).
	Identity string
	// Key is its election key in etcd, and Revision the key's create
	// revision: the leadership's fencing token (see Manager.LeaderKey).
	Key      string
	Revision int64
	// Lease is the etcd lease that keeps the key; the leadership ends when
	// it expires or is revoked.
	Lease int64
}

// CurrentLeader reads from etcd who leads the election at key (a
// LeaderElection.Key): the candidate whose key under it is oldest, as
// etcd's concurrency package elects. It is ErrNoLeader when no candidate
// is campaigning. The read is linearizable; give ctx a deadline.
func CurrentLeader(ctx context.Context, etcd *clientv3.Client, key string) (Leader, error) {
	prefix := strings.TrimSuffix(key, "/") + "/"
	resp, err := etcd.Get(ctx, prefix, clientv3.WithFirstCreate()...)
	if err != nil {
		return Leader{}, fmt.Errorf("manager: reading the leader of %q: %w", key, err)
	}
	if len(resp.Kvs) == 0 {
		return Leader{}, fmt.Errorf("%w at %q", ErrNoLeader, key)
	}
	kv := resp.Kvs[0]
	return Leader{Identity: string(kv.Value), Key: string(kv.Key), Revision: kv.CreateRevision, Lease: kv.Lease}, nil
}
