package cacher

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/listwatch/listwatch/storage"
)

// sharedReads shares a storage read of the present (the storage's current
// revision, its compacted revision) between the concurrent requests that
// need one. Such a request must see every write (or compaction) that
// finished before it was asked for, so it may only use the answer of a
// storage read that started after it was asked for: a read under way that
// started earlier may predate such a write. One storage read is under way
// at a time; the requests that arrive meanwhile wait for it to end and
// then share the next one, which started after all of them. When many
// requests arrive at once this saves most of the storage round trips
// (each a quorum read, about 80 µs of CPU on the two ends of an embedded
// etcd's connection); a request that arrives while another's read is
// under way waits for the rest of that round trip as well as its own. The
// zero value is ready to use.
type sharedReads[T any] struct {
	mu       sync.Mutex     // taken by the requests' goroutines, briefly, never with another lock
	started  uint64         // storage reads started so far; each one's seq
	inflight *sharedRead[T] // the read under way, nil when none is
	last     *sharedRead[T] // the read that ended last
	waiting  int            // callers waiting for a read (for tests)
}

// sharedRead is one storage read, shared by the requests that wait for it.
type sharedRead[T any] struct {
	seq  uint64
	done chan struct{}
	// set before done is closed:
	val       T
	err       error
	abandoned bool // its starter's context ended: err is not the storage's answer
}

// do returns the answer of a storage read (read) that started after do was
// called, possibly one that another caller started. A caller that waits
// returns when its own ctx ends (what names the read in that error); a
// shared read whose starter's context ended is no answer for the others,
// who start or share another.
func (r *sharedReads[T]) do(ctx context.Context, what string, read func(context.Context) (T, error)) (T, error) {
	r.mu.Lock()
	asked := r.started // reads numbered above asked started after this call
	for {
		if last := r.last; last != nil && last.seq > asked {
			r.mu.Unlock()
			return last.val, last.err
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
			var zero T
			return zero, waitEnded(ctx, what)
		}
	}
	r.started++
	call := &sharedRead[T]{seq: r.started, done: make(chan struct{})}
	r.inflight = call
	r.mu.Unlock()

	call.val, call.err = read(ctx)
	call.abandoned = call.err != nil && ctx.Err() != nil

	r.mu.Lock()
	r.inflight = nil
	if !call.abandoned {
		r.last = call
	}
	r.mu.Unlock()
	close(call.done)
	return call.val, call.err
}

// waiters returns how many callers wait for a read under way.
func (r *sharedReads[T]) waiters() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.waiting
}

// waitEnded is the error of a caller whose ctx ended while it waited for
// a read another caller started: a storage timeout when its deadline
// passed, as the storage's own read would have answered.
func waitEnded(ctx context.Context, what string) error {
	err := ctx.Err()
	if errors.Is(err, context.DeadlineExceeded) {
		return &storage.Error{Code: storage.CodeTimeout, Msg: what + ": deadline exceeded", Err: err}
	}
	return fmt.Errorf("cacher: %s: %w", what, err)
}

// currentRV is the storage's current revision for a consistent read or a
// watch's start, shared with the ones that ask at the same time.
func (f *feed) currentRV(ctx context.Context) (uint64, error) {
	return f.revisions.do(ctx, "current resource version", f.store.GetCurrentResourceVersion)
}
