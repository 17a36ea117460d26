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
	m.freshness.setWaiting(true)
	defer m.freshness.setWaiting(false)
	defer m.setFreshErr(nil)
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

// setFreshErr sets (or clears, with nil) what the caches-fresh readiness
// check reports.
func (m *Manager) setFreshErr(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.freshErr = err
}
