package controller

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// zoneQueue is the rate-limited queue of the nodes of one zone that are
// waiting for their NoExecute taint: first in, first out, each node at
// most once, taken no faster than the zone's rate (burst 1). A rate of 0
// takes nothing.
type zoneQueue struct {
	mu      sync.Mutex
	order   []string        // in insertion order; may hold removed names
	queued  map[string]bool // the names really queued
	retryAt map[string]time.Time
	limiter *rate.Limiter
	qps     float64
}

// newZoneQueue returns an empty queue taking qps nodes per second.
func newZoneQueue(qps float64) *zoneQueue {
	return &zoneQueue{queued: map[string]bool{}, retryAt: map[string]time.Time{},
		limiter: rate.NewLimiter(rate.Limit(qps), 1), qps: qps}
}

// add queues node unless it is queued; it reports whether it was added.
func (q *zoneQueue) add(node string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.queued[node] {
		return false
	}
	q.queued[node] = true
	q.order = append(q.order, node)
	return true
}

// remove takes node out of the queue; it reports whether it was queued.
func (q *zoneQueue) remove(node string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.queued[node] {
		return false
	}
	delete(q.queued, node)
	delete(q.retryAt, node)
	return true
}

// len returns how many nodes are queued.
func (q *zoneQueue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.queued)
}

// setRate changes the rate from now on; tokens already earned are kept.
func (q *zoneQueue) setRate(now time.Time, qps float64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if qps == q.qps {
		return
	}
	q.qps = qps
	q.limiter.SetLimitAt(now, rate.Limit(qps))
}

// rate returns the current rate.
func (q *zoneQueue) rate() float64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.qps
}

// try hands queued nodes to process, in order, while the rate allows at
// now. process reports whether the node is done (it leaves the queue) or
// should be retried after retry. try stops at the first node due later.
func (q *zoneQueue) try(now time.Time, process func(node string) (done bool, retry time.Duration)) {
	for {
		node, ok := q.next(now)
		if !ok {
			return
		}
		done, retry := process(node)
		q.mu.Lock()
		if done {
			delete(q.queued, node)
			delete(q.retryAt, node)
		} else if q.queued[node] {
			q.retryAt[node] = now.Add(retry)
			q.order = append(q.order, node)
		}
		q.mu.Unlock()
	}
}

// next pops the first queued node if it is due and the rate allows.
func (q *zoneQueue) next(now time.Time) (string, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.order) > 0 && !q.queued[q.order[0]] {
		q.order = q.order[1:]
	}
	if len(q.order) == 0 || q.qps <= 0 {
		return "", false
	}
	node := q.order[0]
	if at, ok := q.retryAt[node]; ok && now.Before(at) {
		return "", false
	}
	if !q.limiter.AllowN(now, 1) {
		return "", false
	}
	q.order = q.order[1:]
	return node, true
}
