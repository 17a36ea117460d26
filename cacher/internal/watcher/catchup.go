package watcher

import (
	"context"
	"errors"
	"time"

	"github.com/listwatch/listwatch/cacher/internal/history"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/watchcache"
)

// catchUp is the watcher's one catch-up loop: it replays a history.History
// after pos until the watcher has joined live dispatch (true) or ended
// (false). The history is the cache's ring when it holds pos, else a
// shared read of the storage's history (Source.Read: the ring no longer
// holds pos, the cache is being re-initialised, or the watch asked for
// the storage's history first), until the ring holds pos again.
func (w *Watcher) catchUp(ctx context.Context) bool {
	r := reading{g: w.initialRead, mine: w.initialRead != nil, exact: w.Plan.StorageFirst}
	w.initialRead = nil
	defer w.leaveRead(&r)
	for ctx.Err() == nil {
		if r.g != nil && w.env.Source.CacheHolds(w.pos) {
			w.leaveRead(&r) // the ring takes over
		}
		if r.g == nil && w.Plan.StorageFirst {
			w.Plan.StorageFirst = false
			if !w.takeRead(ctx, &r) {
				return false
			}
		}
		var h history.History = w.env.Source
		if r.g != nil {
			h = r.g
		}
		evs, rv, err := h.EventsSince(w.pos, w.env.CatchUpBatch)
		switch {
		case r.g == nil && (errors.Is(err, storage.ErrGone) || errors.Is(err, storage.ErrNotReady)):
			// Older than the ring, or the cache is being re-initialised:
			// a shared read of etcd's history serves meanwhile.
			if !w.takeRead(ctx, &r) {
				return false
			}
			continue
		case r.g == nil && err != nil:
			w.fail(ctx, err, "cache")
			return false
		case errors.Is(err, storage.ErrNotReady):
			// The read is still listing its first state, or failed to.
			if !w.readOn(ctx, &r) {
				return false
			}
			continue
		case err != nil:
			// Fell out of the shared read's history: another one serves.
			w.leaveRead(&r)
			continue
		case r.g == nil && w.allHandled(evs):
			if w.tryJoin() {
				// Live: the catch-up slot Watch may have taken for it is free.
				w.env.Source.ReleaseSlot(w.Plan.SlotHeld)
				w.Plan.SlotHeld = false
				return true
			}
			continue
		case r.g != nil && len(evs) == 0:
			w.pos = max(w.pos, rv)
			if !w.readOn(ctx, &r) {
				return false
			}
			continue
		}
		for _, ev := range evs {
			if !w.deliver(ctx, ev) {
				return false
			}
		}
		if last := evs[len(evs)-1].RV; r.g != nil && last > rv && !w.waitRead(ctx, r.g, last) {
			// The read's newest revision is still arriving: it is
			// delivered completely once the read holds it.
			return false
		} else if last <= rv {
			w.pos = max(w.pos, last)
		}
	}
	return false
}

// reading is the shared read a catch-up replays (g, nil: the ring), and
// whether it was started for the watcher exactly (mine: its failure is
// the watch's answer) or the next one must be (exact).
type reading struct {
	g           *history.Shared
	mine, exact bool
}

// takeRead takes a shared read that holds pos; false when the watch ended.
// A watcher without a catch-up slot is behind (it left live dispatch, or
// the ring moved past its start); one with a slot starts from an older RV
// and reads its own scope from there.
func (w *Watcher) takeRead(ctx context.Context, r *reading) bool {
	key, recursive := w.Scope()
	want := history.Want{Pos: w.pos, Scope: history.Scope{Key: key, Recursive: recursive},
		Behind: !w.Plan.SlotHeld, Exact: r.exact}
	g, err := w.env.Source.Read(ctx, want)
	if err != nil {
		if ctx.Err() == nil {
			w.fail(ctx, err, "cache")
		}
		return false
	}
	r.g, r.mine = g, g.From == want.Pos && g.Scope == want.Scope
	return true
}

// leaveRead gives back the shared read, if any.
func (w *Watcher) leaveRead(r *reading) {
	if r.g != nil {
		w.env.Source.Release(r.g)
		r.g = nil
	}
}

// readOn waits, with every event of the read up to pos handled, for more
// of it; when its stream has ended, it gives the read back (its failure
// ends the watch if it was started for the watcher, else the next read
// is one of the watcher's own). False when the watch ended.
func (w *Watcher) readOn(ctx context.Context, r *reading) bool {
	if w.env.Source.CacheHolds(w.pos) {
		return true
	}
	if r.g.Reading() {
		return w.waitRead(ctx, r.g, w.pos+1)
	}
	err, mine := r.g.Err(), r.mine
	w.leaveRead(r)
	if err != nil && mine {
		w.fail(ctx, err, "storage")
		return false
	}
	r.exact = err != nil
	return w.pause(ctx)
}

// waitRead waits until g holds every revision up to rv, its stream ends
// or the watch ends (false). The bookmark that precedes the watch's
// deadline (Entry.DeadlineBookmark) is sent meanwhile when it falls due,
// at pos.
func (w *Watcher) waitRead(ctx context.Context, g *history.Shared, rv uint64) bool {
	at, due := w.e.DeadlineBookmark()
	if !due {
		_ = g.WaitUntilFresh(ctx, rv)
		return ctx.Err() == nil
	}
	wait, cancel := context.WithDeadline(ctx, at)
	defer cancel()
	if g.WaitUntilFresh(wait, rv) == nil || ctx.Err() != nil || wait.Err() == nil {
		return ctx.Err() == nil
	}
	if w.e.ClaimDeadlineBookmark() && w.pos >= w.lastSent && !w.sendBookmark(ctx, w.pos, false) {
		return false
	}
	return w.waitRead(ctx, g, rv)
}

// initialFromStorage sends the initial state of a watch the cache could
// not serve (late, not trusted, or a corrupt key in its scope), from a
// read of the storage started at its current revision for the watch's
// scope, then the initial-events-end bookmark when asked for.
func (w *Watcher) initialFromStorage(ctx context.Context) bool {
	w.Plan.StorageInitial = false
	cur, err := w.env.Source.StorageRV(ctx)
	if err == nil && w.pos > cur {
		err = storage.NewTooLargeResourceVersionError(w.pos, cur, 1)
	}
	if err != nil {
		w.fail(ctx, err, "storage")
		return false
	}
	w.pos = cur
	r := reading{exact: true}
	defer w.leaveRead(&r)
	for {
		if !w.takeRead(ctx, &r) || !w.waitRead(ctx, r.g, cur) {
			return false
		}
		if rv, ready := r.g.Cache.RV(); ready && rv >= cur {
			break
		}
		// The read ended first: with the storage's answer, or to be read again.
		err := r.g.Err()
		w.leaveRead(&r)
		if err != nil {
			w.fail(ctx, err, "storage")
			return false
		}
		if !w.pause(ctx) {
			return false
		}
	}
	if r.g.Corrupt != nil { // the state cannot be told whole
		w.fail(ctx, r.g.Corrupt, "storage")
		return false
	}
	var res watchcache.ListResult
	r.g.Whole(func() { res, err = r.g.Cache.List(0, watchcache.NotOlderThan, w.ListOptions(nil)) })
	if err != nil {
		w.fail(ctx, err, "storage")
		return false
	}
	w.Plan.Initial = &InitialState{Items: res.Items, RV: res.RV, Annotate: w.Plan.StorageAnnotate}
	if !w.sendInitial(ctx) {
		return false
	}
	w.initialRead, r.g = r.g, nil // the first catch-up reads on from it
	return true
}

func (w *Watcher) allHandled(evs []*watchcache.Event) bool {
	for _, ev := range evs {
		if !w.handled(ev.RV, ev.Key()) {
			return false
		}
	}
	return true
}

// tryJoin registers the watcher for live dispatch if the cache holds no
// event it has not handled; the hub holds its lock meanwhile, so that none
// can slip in between.
func (w *Watcher) tryJoin() bool {
	return w.env.Hub.Join(w.e, func() bool {
		evs, _, err := w.env.Source.EventsSince(w.pos, len(w.revSeen)+1)
		return err == nil && w.allHandled(evs)
	})
}

// pause waits briefly before a read is asked for again.
func (w *Watcher) pause(ctx context.Context) bool {
	t := w.env.Wall.NewTimer(100 * time.Millisecond)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C():
		return true
	}
}
