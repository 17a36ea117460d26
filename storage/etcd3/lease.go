package etcd3

import (
	"context"
	"sync"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// leaseManager hands out leases for writes with a TTL, reusing the last
// granted lease while it expires late enough for the request but not much
// later, so that many keys written close together share one lease instead of
// costing etcd one lease each.
type leaseManager struct {
	client     *clientv3.Client
	maxReuse   time.Duration
	maxObjects int
	now        func() time.Time
	// bound runs an etcd request (the store's bound and availability
	// tracking); nil runs it as is.
	bound func(ctx context.Context, fn func(ctx context.Context) error) error

	// mu guards the fields below and serialises grants.
	mu       sync.Mutex
	id       clientv3.LeaseID
	expires  time.Time
	attached int
}

func newLeaseManager(c *clientv3.Client, maxReuse time.Duration, maxObjects int, now func() time.Time) *leaseManager {
	return &leaseManager{client: c, maxReuse: maxReuse, maxObjects: maxObjects, now: now}
}

// reuseWindow is how much longer than ttl a reused lease may live: 5% of
// ttl, at most maxReuse.
func (l *leaseManager) reuseWindow(ttl time.Duration) time.Duration {
	w := ttl / 20
	if w > l.maxReuse {
		w = l.maxReuse
	}
	return w.Truncate(time.Second)
}

// lease returns a lease that lives at least ttlSeconds from now.
func (l *leaseManager) lease(ctx context.Context, ttlSeconds int64) (clientv3.LeaseID, error) {
	ttl := time.Duration(ttlSeconds) * time.Second
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	window := l.reuseWindow(ttl)
	longEnough := l.expires.After(now.Add(ttl))
	notTooLong := !l.expires.After(now.Add(ttl + window))
	if l.id != 0 && longEnough && notTooLong && l.attached < l.maxObjects {
		l.attached++
		return l.id, nil
	}
	grant := ttl + window
	var resp *clientv3.LeaseGrantResponse
	err := l.call(ctx, func(ctx context.Context) (err error) {
		resp, err = l.client.Lease.Grant(ctx, int64(grant/time.Second))
		return err
	})
	if err != nil {
		return 0, err
	}
	l.id = resp.ID
	l.expires = now.Add(time.Duration(resp.TTL) * time.Second)
	l.attached = 1
	return resp.ID, nil
}

// call runs fn through bound (the store's request bound), or as is.
func (l *leaseManager) call(ctx context.Context, fn func(ctx context.Context) error) error {
	if l.bound == nil {
		return fn(ctx)
	}
	return l.bound(ctx, fn)
}

// forget drops id as the lease to reuse, after etcd reported it gone (for
// example revoked by someone else), so the next write gets a fresh grant.
func (l *leaseManager) forget(id clientv3.LeaseID) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.id == id {
		l.id, l.expires, l.attached = 0, time.Time{}, 0
	}
}
