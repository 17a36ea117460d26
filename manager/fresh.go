package manager

import (
	"context"
	"fmt"
	"time"
)

// awaitFresh waits, before the leader-only Runnables start, until every
// informer of the cache holds every write made before this replica was
// elected (cache.Cache.WaitFresh: each resource's current revision, read
// with a consistent list, applied to the informer's store). Each attempt
// is bounded by FreshnessTimeout; one that runs out is logged with the
// informers still behind, counted in manager_cache_freshness_timeouts_total,
// fails /readyz (caches-fresh) and is retried: the Runnables never start
// on caches that may lack the previous leader's last writes. It returns
// false when ctx ended first (leadership lost, or Run's end).
func (m *Manager) awaitFresh(ctx context.Context) bool {
	start := time.Now()
	m.setAwaiting(true)
	defer m.setAwaiting(false)
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, m.freshTimeout)
		err := m.cache.WaitFresh(actx)
		cancel()
		switch {
		case err == nil:
			m.log.Info("caches fresh: starting leader-only runnables", "waited", time.Since(start).Round(time.Millisecond).String())
			return true
		case ctx.Err() != nil:
			return false
		}
		m.freshness.timedOut()
		m.setFreshErr(fmt.Errorf("elected, but the cache has not caught up with etcd after %d attempts of %v: %w",
			attempt, m.freshTimeout, err))
		m.log.Error("caches not fresh within the freshness timeout: leader-only runnables not started; retrying",
			"err", err, "attempt", attempt, "timeout", m.freshTimeout.String())
	}
}

// setAwaiting records whether this replica waits for fresh caches (the
// gauge, and the leader status of /readyz?verbose); its end clears the
// caches-fresh check's error.
func (m *Manager) setAwaiting(w bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.awaiting = w
	if !w {
		m.freshErr = nil
	}
	m.freshness.setWaiting(w)
}

// setFreshErr sets what the caches-fresh readiness check reports.
func (m *Manager) setFreshErr(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.freshErr = err
}

// awaitingFresh reports whether this replica, elected, waits for fresh
// caches.
func (m *Manager) awaitingFresh() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.awaiting
}
