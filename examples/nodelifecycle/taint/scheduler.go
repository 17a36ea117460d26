package taint

import (
	"context"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/listwatch/listwatch/reflector/workqueue"
)

// pending is one scheduled eviction.
type pending struct {
	node   string
	at     time.Time
	waited time.Duration
}

// scheduler holds the delayed evictions: a DelayingQueue of pod keys and
// what is pending for each. Cancelling forgets the pending entry; the
// queue's copy then finds nothing to do when it comes due.
type scheduler struct {
	m *Manager
	q *workqueue.DelayingQueue[string]

	mu      sync.Mutex
	pending map[string]pending
}

func newScheduler(m *Manager, cfg workqueue.Config) *scheduler {
	return &scheduler{m: m, q: workqueue.NewDelaying[string](cfg), pending: map[string]pending{}}
}

// schedule evicts key at at, unless an eviction is already due no later.
func (s *scheduler) schedule(key, node string, at time.Time, waited time.Duration) {
	s.mu.Lock()
	if p, ok := s.pending[key]; ok && !p.at.After(at) {
		s.mu.Unlock()
		return
	}
	s.pending[key] = pending{node: node, at: at, waited: waited}
	s.mu.Unlock()
	s.q.AddAfter(key, at.Sub(s.m.clock.Now()))
}

// cancel forgets key's pending eviction, if any.
func (s *scheduler) cancel(key string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.pending, key)
}

// due reports whether an eviction is due at now and not done yet.
func (s *scheduler) due(now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, p := range s.pending {
		if !p.at.After(now) {
			return true
		}
	}
	return false
}

// len returns how many evictions are pending.
func (s *scheduler) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pending)
}

// run evicts pods as their time comes, until the queue is shut down.
func (s *scheduler) run(ctx context.Context) {
	for {
		key, shutdown := s.q.Get()
		if shutdown {
			return
		}
		s.fire(ctx, key)
		s.q.Done(key)
	}
}

// fire evicts key if its eviction is still pending and due.
func (s *scheduler) fire(ctx context.Context, key string) {
	now := s.m.clock.Now()
	s.mu.Lock()
	p, ok := s.pending[key]
	if ok && now.Before(p.at) {
		s.mu.Unlock()
		s.q.AddAfter(key, p.at.Sub(now))
		return
	}
	s.mu.Unlock()
	if !ok {
		return
	}
	ns, name := splitKey(key)
	if !s.m.evict(ctx, ns, name, p.node, p.waited) {
		// Due again in a second (unless rescheduled or cancelled
		// meanwhile).
		s.mu.Lock()
		if cur, still := s.pending[key]; still && cur == p {
			cur.at = s.m.clock.Now().Add(time.Second)
			s.pending[key] = cur
		}
		s.mu.Unlock()
		s.q.AddAfter(key, time.Second)
		return
	}
	s.mu.Lock()
	if cur, still := s.pending[key]; still && cur == p {
		delete(s.pending, key)
	}
	s.mu.Unlock()
}

// shutDown stops the queue.
func (s *scheduler) shutDown() { s.q.ShutDown() }

func splitKey(key string) (ns, name string) {
	for i := range len(key) {
		if key[i] == '/' {
			return key[:i], key[i+1:]
		}
	}
	return "", key
}

func isNotFound(err error) bool { return apierrors.IsNotFound(err) }
