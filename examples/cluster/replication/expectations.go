package replication

import (
	"sync"
	"time"
)

// DefaultExpectationsTTL is how long expectations hold before a
// controller stops trusting them (a watch event lost for good, which the
// informer's relist repairs): Kubernetes' five minutes.
const DefaultExpectationsTTL = 5 * time.Minute

// Expectations remember, per controller key (a ReplicaSet's
// namespace/name), the creates and deletes it sent that its informer has
// not reported yet. While they are pending the controller must not count
// pods again: the informer's view is older than its own writes, and
// acting on it would create (or delete) the same pods twice.
//
// Safe for concurrent use.
type Expectations struct {
	ttl time.Duration
	now func() time.Time

	mu sync.Mutex
	m  map[string]*expectation
}

// expectation is one key's pending creates and deletes.
type expectation struct {
	adds    int
	deletes map[string]bool // pod keys whose deletion is awaited
	at      time.Time       // when they were set
}

// NewExpectations returns empty expectations that expire after ttl (0:
// DefaultExpectationsTTL), reading time from now (nil: time.Now).
func NewExpectations(ttl time.Duration, now func() time.Time) *Expectations {
	if ttl <= 0 {
		ttl = DefaultExpectationsTTL
	}
	if now == nil {
		now = time.Now
	}
	return &Expectations{ttl: ttl, now: now, m: map[string]*expectation{}}
}

// Satisfied reports whether key may sync: nothing is awaited, or what is
// awaited has waited longer than the TTL.
func (e *Expectations) Satisfied(key string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	x, ok := e.m[key]
	if !ok {
		return true
	}
	return (x.adds <= 0 && len(x.deletes) == 0) || e.now().Sub(x.at) > e.ttl
}

// ExpectCreations records that key is about to create n pods; it replaces
// whatever key awaited (the controller only sets expectations when they
// were satisfied).
func (e *Expectations) ExpectCreations(key string, n int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.m[key] = &expectation{adds: n, at: e.now()}
}

// ExpectDeletions records that key is about to delete the pods podKeys.
func (e *Expectations) ExpectDeletions(key string, podKeys []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	x := &expectation{deletes: map[string]bool{}, at: e.now()}
	for _, p := range podKeys {
		x.deletes[p] = true
	}
	e.m[key] = x
}

// CreationObserved lowers key's awaited creates by one: the informer saw
// a pod of key's, or a create failed (and will not be seen).
func (e *Expectations) CreationObserved(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x, ok := e.m[key]; ok && x.adds > 0 {
		x.adds--
	}
}

// DeletionObserved marks podKey's deletion as seen (or as failed).
func (e *Expectations) DeletionObserved(key, podKey string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x, ok := e.m[key]; ok {
		delete(x.deletes, podKey)
	}
}

// Pending returns key's awaited creates and deletes.
func (e *Expectations) Pending(key string) (adds, deletes int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if x, ok := e.m[key]; ok {
		return x.adds, len(x.deletes)
	}
	return 0, 0
}

// Forget drops key's expectations (its ReplicaSet is gone).
func (e *Expectations) Forget(key string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.m, key)
}
