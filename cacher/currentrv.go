package cacher

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/listwatch/listwatch/storage"
)

// revisionReads shares the storage's current revision between concurrent
// consistent reads. A consistent read must see every write that finished
// before it was asked for, so it may only use the answer of a storage read
// that started after it was asked for: a read under way that started
// earlier may predate such a write. One storage read is under way at a
// time; the consistent reads that arrive meanwhile wait for it to end and
// then share the next one, which started after all of them. When many
// consistent reads arrive at once this saves most of the storage round
// trips (each a quorum read, and its CPU on both ends of the connection);
// a read that arrives while another is under way waits for the rest of
// that round trip as well as its own. The zero value is ready to use.
type revisionReads struct {
	mu       sync.Mutex
	started  uint64        // storage reads started so far; each one's seq
	inflight *revisionRead // the read under way, nil when none is
	last     *revisionRead // the read that ended last
	waiting  int           // callers waiting for a read (for tests)
}

// revisionRead is one storage read of the current revision, shared by the
// consistent reads that wait for it.
type revisionRead struct {
	seq  uint64
	done chan struct{}
	// set before done is closed:
	rv        uint64
	err       error
	abandoned bool // its starter's context ended: err is not the storage's answer
}

// current returns the storage's current revision, from a storage read
// (read) that started after current was called, possibly one that
// another caller started. A caller that waits returns when its own ctx
// ends; a shared read whose starter's context ended is no answer for the
// others, who start or share another.
func (r *revisionReads) current(ctx context.Context, read func(context.Context) (uint64, error)) (uint64, error) {
	r.mu.Lock()
	asked := r.started // reads numbered above asked started after this call
	for {
		if last := r.last; last != nil && last.seq > asked {
			r.mu.Unlock()
			return last.rv, last.err
		}
		wait := r.inflight
		if wait == nil {
			break
		}
		r.waiting++
		r.mu.Unlock()
		select {
		case <-wait.done:
		case <-ctx.Done():
		}
		r.mu.Lock()
		r.waiting--
		if ctx.Err() != nil {
			r.mu.Unlock()
			return 0, waitEnded(ctx)
		}
	}
	r.started++
	call := &revisionRead{seq: r.started, done: make(chan struct{})}
	r.inflight = call
	r.mu.Unlock()

	call.rv, call.err = read(ctx)
	call.abandoned = call.err != nil && ctx.Err() != nil

	r.mu.Lock()
	r.inflight = nil
	if !call.abandoned {
		r.last = call
	}
	r.mu.Unlock()
	close(call.done)
	return call.rv, call.err
}

// waiters returns how many callers wait for a read under way.
func (r *revisionReads) waiters() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.waiting
}

// waitEnded is the error of a caller whose ctx ended while it waited for
// a read another caller started: a storage timeout when its deadline
// passed, as the storage's own read would have answered.
func waitEnded(ctx context.Context) error {
	err := ctx.Err()
	if errors.Is(err, context.DeadlineExceeded) {
		return &storage.Error{Code: storage.CodeTimeout, Msg: "current resource version: deadline exceeded", Err: err}
	}
	return fmt.Errorf("cacher: current resource version: %w", err)
}

// currentRV is the storage's current revision for a consistent read,
// shared with the consistent reads that ask at the same time (see
// revisionReads).
func (c *Cacher) currentRV(ctx context.Context) (uint64, error) {
	return c.revisions.current(ctx, c.store.GetCurrentResourceVersion)
}
