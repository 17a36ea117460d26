package etcd3

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// compactionRefreshAge is how old the store's knowledge of etcd's compacted
// revision may get before CompactRevision asks etcd again.
const compactionRefreshAge = time.Second

// compactionProbeTimeout bounds a probe started by CompactRevision, which
// has no context of its own.
const compactionProbeTimeout = 2 * time.Second

// compactionTracker knows the revision etcd has compacted its history to,
// whoever compacted it (a Compactor in any process, etcdctl, or etcd's own
// auto-compaction).
//
// etcd does not publish its compacted revision, so the tracker asks: a
// count-only range of one key at the last known compacted revision
// succeeds while nothing newer was compacted (one small round trip). When
// it fails with ErrCompacted, the new revision is found from the hint that
// Kubernetes-style compactors (and this package's Compactor) leave in the
// coordination key, or by bisecting the revisions in between (about
// log2(revisions since the last compaction) small ranges, once per
// compaction). Watch responses that report a compaction raise the value for
// free. A probe runs at most once per compactionRefreshAge unless an
// operation saw ErrCompacted, which marks the knowledge stale at once, so a
// read that just failed with 410 is followed by an exact CompactRevision.
type compactionTracker struct {
	client   getter // the store's bounded KV
	probeKey string // a key to range over (its existence does not matter)
	hintKey  string // the compactors' coordination key

	mu        sync.Mutex
	rev       int64
	checkedAt time.Time
	stale     bool
	// inflight are the probes under way, oldest first (at most
	// maxProbesInFlight); probedFrom is when the newest completed probe
	// started, and staleAt when invalidate was last called.
	inflight   []*probeCall
	probedFrom time.Time
	staleAt    time.Time
}

// getter is the part of clientv3.KV the tracker uses.
type getter interface {
	Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error)
}

// probeCall is one probe of etcd, shared by the refreshes that may use it.
type probeCall struct {
	started time.Time
	done    chan struct{}
}

func newCompactionTracker(client getter, probeKey string) *compactionTracker {
	return &compactionTracker{client: client, probeKey: probeKey, hintKey: DefaultCompactKey, stale: true}
}

// current returns the compacted revision, probing etcd first when the last
// probe is older than compactionRefreshAge or the knowledge is stale. A
// failed probe keeps the last known value.
func (t *compactionTracker) current() int64 {
	t.mu.Lock()
	fresh := !t.stale && time.Since(t.checkedAt) < compactionRefreshAge
	rev := t.rev
	t.mu.Unlock()
	if fresh {
		return rev
	}
	ctx, cancel := context.WithTimeout(context.Background(), compactionProbeTimeout)
	defer cancel()
	rev, _ = t.refresh(ctx)
	return rev
}

// maxProbesInFlight bounds the probes under way at once. A refresh needs
// a probe that started after it was called: with a second probe allowed,
// a refresh that arrives while one is under way starts its own at once
// instead of first waiting for that one, which keeps its wait near one
// round trip, while later arrivals still share the newest probe.
const maxProbesInFlight = 2

// refresh returns the compacted revision as etcd knows it now: from a
// probe that started after refresh was called. Concurrent refreshes share
// such a probe instead of each making their own: a refresh waits for the
// newest probe under way if it started after the refresh was called, and
// otherwise starts one (a probe that started earlier may predate a
// compaction the caller must see), unless maxProbesInFlight are under way,
// in which case it waits for the oldest and looks again.
func (t *compactionTracker) refresh(ctx context.Context) (int64, error) {
	asked := time.Now()
	for {
		t.mu.Lock()
		if !t.stale && !t.probedFrom.Before(asked) {
			rev := t.rev
			t.mu.Unlock()
			return rev, nil
		}
		var wait *probeCall
		if n := len(t.inflight); n > 0 && !t.inflight[n-1].started.Before(asked) {
			wait = t.inflight[n-1]
		} else if n >= maxProbesInFlight {
			wait = t.inflight[0]
		}
		if wait != nil {
			t.mu.Unlock()
			select {
			case <-wait.done:
			case <-ctx.Done():
				return t.known(), ctx.Err()
			}
			continue // its result, or the next probe's, is checked above
		}
		c := &probeCall{started: time.Now(), done: make(chan struct{})}
		t.inflight = append(t.inflight, c)
		known := t.rev
		t.mu.Unlock()

		rev, err := t.probe(ctx, known)

		t.mu.Lock()
		t.inflight = slices.DeleteFunc(t.inflight, func(p *probeCall) bool { return p == c })
		if err == nil {
			t.rev = max(t.rev, rev)
			t.checkedAt = time.Now()
			if c.started.After(t.probedFrom) {
				t.probedFrom = c.started
			}
			if t.staleAt.Before(c.started) {
				t.stale = false
			}
		}
		rev = t.rev
		t.mu.Unlock()
		close(c.done)
		return rev, err
	}
}

func (t *compactionTracker) known() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.rev
}

// observed records a compacted revision reported by etcd (a watch response).
func (t *compactionTracker) observed(rev int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.rev = max(t.rev, rev)
}

// invalidate makes the next current() ask etcd: an operation saw ErrCompacted.
func (t *compactionTracker) invalidate() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stale, t.staleAt = true, time.Now()
}

// readableAt reports whether etcd still serves a range at rev.
func (t *compactionTracker) readableAt(ctx context.Context, rev int64) (bool, error) {
	_, err := t.client.Get(ctx, t.probeKey, clientv3.WithRev(rev), clientv3.WithCountOnly())
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, rpctypes.ErrCompacted):
		return false, nil
	}
	return false, err
}

// probe finds etcd's compacted revision, known to be at least known: the
// lowest revision a range can still be served at (etcd serves ranges at
// its compacted revision and refuses older ones).
func (t *compactionTracker) probe(ctx context.Context, known int64) (int64, error) {
	ok, err := t.readableAt(ctx, max(known, 1))
	if err != nil || ok {
		return known, err
	}
	// Compacted past known. The coordination key usually names the target.
	resp, err := t.client.Get(ctx, t.hintKey)
	if err != nil {
		return known, err
	}
	hi := resp.Header.Revision // ranges at the current revision always work
	if len(resp.Kvs) == 1 {
		if hint, perr := strconv.ParseInt(string(resp.Kvs[0].Value), 10, 64); perr == nil && hint > known && hint <= hi {
			atHint, err := t.readableAt(ctx, hint)
			if err != nil {
				return known, err
			}
			if atHint {
				below, err := t.readableAt(ctx, hint-1)
				if err != nil {
					return known, err
				}
				if !below {
					return hint, nil
				}
				hi = hint - 1
			} else {
				known = hint
			}
		}
	}
	// Bisect: lo is not readable, hi is.
	lo := max(known, 1)
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		ok, err := t.readableAt(ctx, mid)
		if err != nil {
			return known, err
		}
		if ok {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi, nil
}
