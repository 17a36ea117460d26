package manager

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/client/v3/concurrency"
)

// errLeaseGone is a renewal answered with TTL <= 0: the lease has expired
// or was revoked.
var errLeaseGone = errors.New("lease expired or revoked")

// elect campaigns until this replica leads or ctx ends, then runs the
// leader-only Runnables until ctx ends or leadership is lost (see the
// package doc's Fencing). It returns nil when ctx ended, an error wrapping
// ErrLeadershipLost when leadership was lost, or the error that kept it
// from campaigning.
func (m *Manager) elect(ctx context.Context, rs []Runnable, fail func(error)) error {
	le := m.election
	sess, err := m.newSession(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("manager %q: leader election session: %w", m.name, err)
	}
	release := le.ReleaseOnCancel
	defer func() { m.endSession(sess, release) }()

	e := concurrency.NewElection(sess, le.Key)
	m.log.Info("campaigning for leadership", "key", le.Key, "identity", le.Identity, "lease", sess.Lease())
	if err := e.Campaign(ctx, le.Identity); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("manager %q: campaign: %w", m.name, err)
	}
	// The key is the oldest under the prefix. Start the renewal clock and
	// make sure the key is still there (Campaign does not notice a lease
	// that expired while it waited).
	deadline, err := m.confirm(ctx, sess, e)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		release = true
		return fmt.Errorf("manager %q: %w: after campaign: %w", m.name, ErrLeadershipLost, err)
	}
	m.log.Info("elected leader", "key", e.Key(), "rev", e.Rev())

	leaderCtx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); m.lead(leaderCtx, rs, fail, e.Key(), e.Rev()) }()
	lost := m.hold(ctx, sess, deadline)
	stop()
	<-done // every leader-only Runnable has returned
	if lost != nil {
		release = true // nothing of ours runs any more: let a standby in at once
		m.log.Error("lost leadership; leader-only runnables stopped", "err", lost, "runnables", runnableNames(rs))
		return fmt.Errorf("manager %q: %w: %w", m.name, ErrLeadershipLost, lost)
	}
	return nil
}

// newSession grants a lease of LeaseDuration (within RenewDeadline) and
// returns a Session keeping it alive until ctx ends.
func (m *Manager) newSession(ctx context.Context) (*concurrency.Session, error) {
	le := m.election
	gctx, cancel := context.WithTimeout(ctx, le.RenewDeadline)
	defer cancel()
	lease, err := le.Client.Grant(gctx, int64(le.ttlSeconds()))
	if err != nil {
		return nil, fmt.Errorf("grant lease: %w", err)
	}
	sess, err := concurrency.NewSession(le.Client, concurrency.WithLease(lease.ID),
		concurrency.WithTTL(le.ttlSeconds()), concurrency.WithContext(ctx))
	if err != nil {
		m.revoke(lease.ID)
		return nil, err
	}
	return sess, nil
}

// confirm renews the lease once and checks that e's key still exists with
// e's revision. It returns the renewal deadline.
func (m *Manager) confirm(ctx context.Context, sess *concurrency.Session, e *concurrency.Election) (time.Time, error) {
	deadline, err := m.renew(ctx, sess, time.Now().Add(m.election.RenewDeadline))
	if err != nil {
		return time.Time{}, err
	}
	rctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	resp, err := m.election.Client.Get(rctx, e.Key())
	if err != nil {
		return time.Time{}, fmt.Errorf("read election key: %w", err)
	}
	if len(resp.Kvs) == 0 || resp.Kvs[0].CreateRevision != e.Rev() {
		return time.Time{}, fmt.Errorf("election key %q is gone", e.Key())
	}
	return deadline, nil
}

// hold keeps the lease renewed every RetryPeriod until ctx ends (nil) or
// leadership is lost (the reason): the renewal deadline passed, etcd says
// the lease is gone, or the session ended.
func (m *Manager) hold(ctx context.Context, sess *concurrency.Session, deadline time.Time) error {
	tick := time.NewTicker(m.election.RetryPeriod)
	defer tick.Stop()
	expire := time.NewTimer(time.Until(deadline))
	defer expire.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-sess.Done():
			if ctx.Err() != nil {
				return nil
			}
			return errors.New("etcd session ended")
		case <-expire.C:
			return fmt.Errorf("no lease renewal within the renew deadline %v", m.election.RenewDeadline)
		case <-tick.C:
		}
		if !time.Now().Before(deadline) {
			return fmt.Errorf("no lease renewal within the renew deadline %v", m.election.RenewDeadline)
		}
		next, err := m.renew(ctx, sess, deadline)
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, errLeaseGone) || errors.Is(err, rpctypes.ErrLeaseNotFound):
			return err
		case err != nil:
			m.log.Warn("lease renewal failed; retrying", "err", err, "deadline", deadline)
			continue
		}
		deadline = next
		expire.Reset(time.Until(deadline))
	}
}

// renew sends one keep-alive for the session's lease, with deadline as
// the request's deadline, and returns the new renewal deadline: the send
// time plus RenewDeadline (less, if etcd granted a TTL shorter than
// LeaseDuration). The server keeps the lease at least LeaseDuration after
// the send time.
func (m *Manager) renew(ctx context.Context, sess *concurrency.Session, deadline time.Time) (time.Time, error) {
	le := m.election
	rctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	sent := time.Now()
	resp, err := le.Client.KeepAliveOnce(rctx, sess.Lease())
	if err != nil {
		return time.Time{}, fmt.Errorf("renew lease %x: %w", sess.Lease(), err)
	}
	if resp.TTL <= 0 {
		return time.Time{}, fmt.Errorf("renew lease %x: %w", sess.Lease(), errLeaseGone)
	}
	margin := le.LeaseDuration - le.RenewDeadline
	return sent.Add(min(le.RenewDeadline, time.Duration(resp.TTL)*time.Second-margin)), nil
}

// endSession stops the session's keep-alive and, with release, revokes its
// lease (deleting the election key) so that a standby is elected at once.
func (m *Manager) endSession(sess *concurrency.Session, release bool) {
	sess.Orphan()
	if release {
		m.revoke(sess.Lease())
	}
}

// revoke revokes lease, within RetryPeriod; it expires anyway if that
// fails.
func (m *Manager) revoke(lease clientv3.LeaseID) {
	ctx, cancel := context.WithTimeout(context.Background(), m.election.RetryPeriod)
	defer cancel()
	if _, err := m.election.Client.Revoke(ctx, lease); err != nil {
		m.log.Warn("could not revoke the election lease; it will expire", "lease", lease, "err", err)
		return
	}
	m.log.Info("released the election lease", "lease", lease)
}
