package cacher

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/listwatch/listwatch/storage"
)

// heldReads is a storage read of the current revision whose first call is
// held until release; each call answers 100 + its number.
type heldReads struct {
	calls   atomic.Int64
	held    chan struct{} // closed when the first call is held
	release chan struct{}
}

func newHeldReads() *heldReads {
	return &heldReads{held: make(chan struct{}), release: make(chan struct{})}
}

func (h *heldReads) read(ctx context.Context) (uint64, error) {
	n := h.calls.Add(1)
	if n == 1 {
		close(h.held)
		select {
		case <-h.release:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
	return uint64(100 + n), nil
}

// waitFor polls cond until it holds or the test's time runs out.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 10s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

type rvResult struct {
	rv  uint64
	err error
}

// Callers that arrive while a read is under way do not use it (it may
// predate writes they must see) but share the one read that starts after
// it, instead of each making their own.
func TestSharedReadsShareTheNextRead(t *testing.T) {
	var r sharedReads[uint64]
	h := newHeldReads()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	first := make(chan rvResult, 1)
	go func() {
		rv, err := r.do(ctx, "current resource version", h.read)
		first <- rvResult{rv, err}
	}()
	<-h.held
	const later = 5
	results := make(chan rvResult, later)
	for range later {
		go func() {
			rv, err := r.do(ctx, "current resource version", h.read)
			results <- rvResult{rv, err}
		}()
	}
	waitFor(t, "later callers waiting", func() bool { return r.waiters() == later })
	close(h.release)

	if got := <-first; got.err != nil || got.rv != 101 {
		t.Errorf("first caller: got %d, %v; want 101 (its own read)", got.rv, got.err)
	}
	for range later {
		if got := <-results; got.err != nil || got.rv != 102 {
			t.Errorf("later caller: got %d, %v; want 102 (the read started after it)", got.rv, got.err)
		}
	}
	if n := h.calls.Load(); n != 2 {
		t.Errorf("storage reads: %d, want 2 for %d callers", n, later+1)
	}
}

// A read whose starter gives up is no answer for the callers waiting for
// it: they make another read and get its answer.
func TestSharedReadsOutliveTheirStarter(t *testing.T) {
	var r sharedReads[uint64]
	h := newHeldReads()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	starterCtx, stopStarter := context.WithCancel(ctx)

	first := make(chan error, 1)
	go func() {
		_, err := r.do(starterCtx, "current resource version", h.read)
		first <- err
	}()
	<-h.held
	second := make(chan rvResult, 1)
	go func() {
		rv, err := r.do(ctx, "current resource version", h.read)
		second <- rvResult{rv, err}
	}()
	waitFor(t, "second caller waiting", func() bool { return r.waiters() == 1 })
	stopStarter()

	if err := <-first; !errors.Is(err, context.Canceled) {
		t.Errorf("starter: got %v, want its context's cancellation", err)
	}
	if got := <-second; got.err != nil || got.rv != 102 {
		t.Errorf("waiting caller: got %d, %v; want 102 from a read of its own", got.rv, got.err)
	}
}

// A caller whose deadline passes while it waits gets a storage timeout,
// as from a read of its own, and stops waiting.
func TestSharedReadsWaitEndsWithTheCallersDeadline(t *testing.T) {
	var r sharedReads[uint64]
	h := newHeldReads()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	first := make(chan error, 1)
	go func() {
		_, err := r.do(ctx, "current resource version", h.read)
		first <- err
	}()
	<-h.held
	short, cancelShort := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancelShort()
	if _, err := r.do(short, "current resource version", h.read); !storage.IsCode(err, storage.CodeTimeout) {
		t.Errorf("got %v, want a storage timeout", err)
	}
	if r.waiters() != 0 {
		t.Errorf("waiters: %d after the caller gave up, want 0", r.waiters())
	}
	close(h.release)
	if err := <-first; err != nil {
		t.Errorf("first caller: %v", err)
	}
}
