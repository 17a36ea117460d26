package cacher

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"

	"github.com/listwatch/listwatch/cacher/internal/history"
	"github.com/listwatch/listwatch/cacher/internal/hub"
	"github.com/listwatch/listwatch/storage"
)

// errRelist asks the reflector to list again (the watch RV was compacted or
// the cache could not apply an event).
var errRelist = errors.New("cacher: relist needed")

// listConfirmTimeout bounds how long a listing waits for its watch to show
// a sign of life before it is applied anyway.
const listConfirmTimeout = time.Second

// listing is a list result not yet in the cache: it replaces the cache's
// content once the watch that follows it is known to be established (its
// first event or progress notification), so that a compaction racing with
// the start of the watch is seen as a 410 before anyone relies on the list.
type listing struct {
	items []runtime.Object
	rv    uint64
	// distrustGen is the count of reasons to distrust the cache (see
	// feed.distrustGen) when the list started.
	distrustGen uint64
	// corrupt are the keys whose values the storage could not decode,
	// sorted (see feed_listpages.go and feed_corrupt.go).
	corrupt []string
}

// reflect is the reflector goroutine: list, then watch from the list RV,
// resuming a broken watch from the last complete RV and relisting only
// when needed. It is the only writer of the cache.
func (f *feed) reflect(ctx context.Context) {
	b := backoff{clock: f.clk.wall, min: 50 * time.Millisecond, max: 5 * time.Second}
	var rv uint64
	var pending *listing
	relist := true
	failing := failureClock{clock: f.clk.wall}
	for ctx.Err() == nil {
		if relist {
			f.drainRelist() // this list is the one asked for
			l, err := f.list(ctx)
			if err != nil {
				f.log.Warn("cacher: list failed", "prefix", f.prefix, "err", err)
				if _, ready := f.cache.RV(); ready && !outage(err) && ctx.Err() == nil {
					// The storage cannot be read as the cache holds it (a
					// corrupt object, a changed transformer): end the
					// watches rather than leave them waiting for events
					// that will not come until the list succeeds.
					f.reinitialize("the list of "+f.prefix+" failed", err)
				}
				// A relist asked for meanwhile (the transformer changed
				// again) is what this loop does next anyway: retry now.
				b.wait(ctx, b.max, f.relist)
				continue
			}
			pending, rv, relist = l, l.rv, false
		}
		before := rv
		progressed, err := f.watchFrom(ctx, rv, &pending)
		if ctx.Err() != nil {
			return
		}
		// Resume from the last complete revision: the watch may have broken
		// in the middle of one; the cache ignores the events it replays.
		rv, _ = f.cache.RV()
		if errors.Is(err, errRelist) || pending != nil {
			relist = true
		}
		if progressed {
			b.reset()
		}
		// Progress for recovery is the cache's RV moving: a resumed watch
		// replays the revision it broke in, which the cache ignores.
		if rv > before {
			failing.reset()
		}
		if !relist && failing.failed(err) >= f.cfg.WatchRecoveryTimeout {
			f.recoverFailingWatch(failing.failed(err), err)
			failing.reset()
			relist = true
		}
		f.log.Info("cacher: watch ended, resuming", "prefix", f.prefix, "rv", rv, "relist", relist, "err", err)
		b.wait(ctx, failing.left(f.cfg.WatchRecoveryTimeout), nil)
	}
}

// replace makes l the cache's content; live watchers catch up from their
// position through one shared read of etcd's history up to l.rv (see
// feed_history.go), as the cache's history restarts at l.rv.
func (f *feed) replace(l *listing) error {
	var gap *history.Shared
	defer func() { // after the commit: it takes runMu
		if gap != nil {
			f.startShared(gap, nil, false)
		}
	}()
	return f.hub.Commit(func(tx hub.Tx) error {
		before, _ := f.cache.RV()
		lost := f.lostToCorruption(l.corrupt)
		gap = f.forkGap(tx, l.rv)
		// Before the new content becomes visible: reads must find its corrupt
		// keys with it.
		f.setCorrupt(l.corrupt)
		if err := f.cache.Replace(l.items, l.rv); err != nil {
			gap.Fail()
			return err
		}
		tx.LagAll(before)
		f.endWatchesOf(tx, lost, l.rv)
		f.trustedGen.Store(l.distrustGen)
		f.cfg.Metrics.CacheResourceVersion(l.rv)
		f.log.Info("cacher: listed", "prefix", f.prefix, "objects", len(l.items), "rv", l.rv)
		return nil
	})
}

// watchFrom applies the storage's events after rv until the watch breaks.
// A pending listing is applied first, on the watch's first sign of life;
// meanwhile progress notifications are requested to get one quickly. It
// reports whether anything was applied.
func (f *feed) watchFrom(ctx context.Context, rv uint64, pending **listing) (bool, error) {
	// A listing's RV, and the cache's RV once the storage marks revision
	// ends, are whole revisions: watch from them. Otherwise the cache may
	// be in the middle of revision rv: watch from the one before and replay
	// rv (the cache ignores what it holds). Replaying needlessly would
	// decode revision rv again, which fails if its values became unreadable
	// since (a broken transformer), and asks etcd for a revision it may
	// have compacted.
	from := rv
	if *pending == nil && from > 1 && !f.wholeRevisions.Load() {
		from--
	}
	opts := storage.ListOptions{ResourceVersion: storage.RVAt(from), Recursive: true, ProgressNotify: true,
		RevisionEndBookmarks: true, Predicate: storage.SelectionPredicate{AllowWatchBookmarks: true}}
	w, err := f.store.Watch(ctx, f.prefix, opts)
	if err != nil {
		if errors.Is(err, storage.ErrGone) {
			return false, fmt.Errorf("%w: %w", errRelist, err)
		}
		return false, err
	}
	defer w.Stop()
	defer f.hub.Batch(false)
	poke := f.clk.wall.NewTicker(50 * time.Millisecond)
	defer poke.Stop()
	f.WantProgress()
	// Without a sign of life within listConfirmTimeout the listing is used
	// anyway: a storage without progress notifications must work too.
	confirmBy := f.clk.wall.Now().Add(listConfirmTimeout)
	progressed := false
	batch := gathering{whole: f.wholeRevisions.Load()}
	for {
		select {
		case <-ctx.Done():
			return progressed, ctx.Err()
		case why := <-f.relist:
			return progressed, fmt.Errorf("%w: %w", errRelist, why)
		case now := <-poke.C():
			if *pending != nil && !now.Before(confirmBy) {
				if err := f.replace(*pending); err != nil {
					return progressed, fmt.Errorf("%w: %w", errRelist, err)
				}
				*pending = nil
			}
			if *pending != nil {
				f.WantProgress()
			}
		case ev, ok := <-w.ResultChan():
			if !ok {
				return progressed, errors.New("storage watch closed")
			}
			if *pending != nil && ev.Type != watch.Error {
				if err := f.replace(*pending); err != nil {
					return progressed, fmt.Errorf("%w: %w", errRelist, err)
				}
				*pending = nil
			}
			// While more events wait, the hub holds deliveries to hand
			// them over together (see hub.batching).
			f.hub.Batch(len(w.ResultChan()) > 0)
			next, err := f.handleStorageEvent(ctx, ev, rv, &batch)
			if err != nil {
				return progressed, err
			}
			progressed = progressed || next > rv
			rv = next
		}
	}
}

// handleStorageEvent applies one event of the reflector's watch and returns
// the new RV. Once the storage marks revision ends, a revision's events
// are gathered in batch and applied together (see applyRevision).
func (f *feed) handleStorageEvent(ctx context.Context, ev watch.Event, rv uint64, batch *gathering) (uint64, error) {
	switch ev.Type {
	case watch.Error:
		err := statusError(ev.Object)
		if errors.Is(err, storage.ErrGone) || apierrors.IsResourceExpired(err) || apierrors.IsGone(err) {
			return rv, fmt.Errorf("%w: %w", errRelist, err)
		}
		if isCorruptDeletion(err) {
			// A value that could not be read was deleted (the unsafe
			// delete): the storage cannot replay that revision, a list
			// after it is the way on (see feed_corrupt.go). Watchers whose scope
			// held the key get the storage's error as they catch up.
			f.log.Warn("cacher: an unreadable object was deleted; relisting", "prefix", f.prefix, "rv", rv, "err", err)
			return rv, fmt.Errorf("%w: %w", errRelist, err)
		}
		return rv, err
	case watch.Bookmark:
		b, err := f.cfg.Versioner.ObjectResourceVersion(ev.Object)
		if err != nil || b < rv {
			return rv, nil
		}
		if batch.rev.Ends(b, true) {
			if err := f.applyRevision(ctx, &batch.rev); err != nil {
				return rv, fmt.Errorf("%w: %w", errRelist, err)
			}
		}
		if history.IsEnd(ev.Object) {
			batch.whole = true
			f.wholeRevisions.Store(true)
			_ = f.hub.Commit(func(hub.Tx) error { f.cache.UpdateRV(b); return nil })
			f.cfg.Metrics.CacheResourceVersion(b)
			return b, nil
		}
		_ = f.hub.Commit(func(tx hub.Tx) error {
			f.cache.UpdateRV(b)
			tx.Progressed(b)
			return nil
		})
		f.cfg.Metrics.CacheResourceVersion(b)
		return b, nil
	}
	r, err := f.cfg.Versioner.ObjectResourceVersion(ev.Object)
	if err != nil || r < rv {
		return rv, fmt.Errorf("%w: event RV %d after %d: %v", errRelist, r, rv, err)
	}
	if batch.whole {
		if batch.rev.Ends(r, false) {
			// A later revision started: the gathered one is complete.
			if err := f.applyRevision(ctx, &batch.rev); err != nil {
				return rv, fmt.Errorf("%w: %w", errRelist, err)
			}
		}
		batch.rev.Add(ev, r, "")
		return r, nil
	}
	if err := f.applyAndDispatch(ctx, ev, r); err != nil {
		return rv, fmt.Errorf("%w: %w", errRelist, err)
	}
	return r, nil
}

// applyAndDispatch records an event in the cache and publishes it to the live
// watchers it may concern, atomically with respect to watchers joining.
// An object the cache cannot hold is left out, its key served by the
// storage (see feed_uncacheable.go).
func (f *feed) applyAndDispatch(ctx context.Context, e watch.Event, rv uint64) error {
	var bad *uncacheableFound
	if cur, _ := f.cache.RV(); rv > cur { // not a replay the cache ignores
		var err error
		var good []watch.Event
		if good, bad, err = f.splitUncacheable(ctx, []watch.Event{e}, rv); err != nil {
			return err
		}
		if len(good) == 0 {
			e = watch.Event{}
		}
	}
	return f.hub.Commit(func(tx hub.Tx) error {
		stale, err := f.markUncacheable(tx, bad, rv)
		if err != nil {
			return err
		}
		if e.Object != nil {
			stale = append(stale, e)
		}
		for _, e := range stale {
			if err := f.applyLocked(tx, e.Type, e.Object, rv); err != nil {
				return err
			}
		}
		return nil
	})
}

// applyLocked is one event of applyAndDispatch inside the hub's commit.
func (f *feed) applyLocked(tx hub.Tx, typ watch.EventType, obj runtime.Object, rv uint64) error {
	if drop := f.dropEvent.Load(); drop != nil && (*drop)(typ, obj) {
		f.cache.UpdateRV(rv)
		return nil
	}
	ev, err := f.cache.Apply(typ, obj, rv)
	if err != nil || ev == nil {
		return err
	}
	f.readableAgain(ev.Key())
	f.cfg.Metrics.EventReceived(tx.Dispatch(ev))
	f.cfg.Metrics.CacheResourceVersion(rv)
	return nil
}

// gathering is the feed's stream of revisions: once the storage marks
// revision ends (whole), each revision is gathered in rev and applied
// whole; until the first mark, events are applied one by one and the cache
// finds revision ends itself.
type gathering struct {
	whole bool
	rev   history.Revision
}

// statusError turns the object of an error event into an error.
func statusError(obj runtime.Object) error {
	if st, ok := obj.(*metav1.Status); ok {
		return &apierrors.StatusError{ErrStatus: *st}
	}
	return fmt.Errorf("watch error event with %T", obj)
}

// backoff is a capped exponential delay.
type backoff struct {
	clock         clock.Clock
	min, max, cur time.Duration
}

func (b *backoff) reset() { b.cur = 0 }

// wait waits for the next delay, but no longer than limit, or until a
// value arrives on wake (nil: nothing wakes it).
func (b *backoff) wait(ctx context.Context, limit time.Duration, wake <-chan error) {
	b.cur = min(max(b.cur*2, b.min), b.max)
	t := b.clock.NewTimer(max(min(b.cur, limit), 0))
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C():
	case <-wake:
	}
}
