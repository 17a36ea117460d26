package cacher

import (
	"context"
	"errors"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"

	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/watchcache"
)

// catchUp replays history after pos, from the cache or, when the cache no
// longer holds it (or is not ready), from the storage, until the watcher has joined live
// dispatch (true) or ended (false).
func (w *watcher) catchUp(ctx context.Context) bool {
	for ctx.Err() == nil {
		evs, _, err := w.env.src.eventsSince(w.pos, w.env.catchUpBatch)
		switch {
		case errors.Is(err, storage.ErrGone) && w.shared() != nil:
			// Left behind by a relist (see feed_gap.go), or fell behind
			// the cache's history (see feed_behind.go): a read of the
			// storage's history shared with the others serves.
			g := w.sharedRead
			w.sharedRead = nil // not kept beyond this catch-up
			if !w.catchUpFromGap(ctx, g) {
				return false
			}
			continue
		case errors.Is(err, storage.ErrGone), errors.Is(err, storage.ErrNotReady):
			// Older than the cache's history, or the cache is being
			// re-initialised: etcd's history serves meanwhile.
			if !w.catchUpFromStorage(ctx) {
				return false
			}
			continue
		case err != nil:
			w.fail(ctx, err, "cache")
			return false
		case w.allHandled(evs):
			if w.tryJoin() {
				// Live: the catch-up slot Watch may have taken for it
				// (it caught up from a shared read or the cache) is free.
				w.env.src.releaseSlot(w.plan.slotHeld)
				w.plan.slotHeld = false
				return true
			}
			continue
		}
		for _, ev := range evs {
			if !w.deliver(ctx, ev) {
				return false
			}
		}
	}
	return false
}

// shared chooses (in sharedRead) the shared read of history that can
// replay the events after pos: the last relist's, else one for watchers
// that fell behind (which it may start).
func (w *watcher) shared() *gapHistory {
	if w.plan.storageInitial {
		// Its initial events come from the storage's state, which only
		// its own storage watch sends.
		w.sharedRead = nil
		return nil
	}
	w.sharedRead = w.sharedGap()
	if w.sharedRead == nil {
		w.sharedRead = w.sharedBehind()
	}
	return w.sharedRead
}

// sharedGap returns the shared history of the last relist if it can
// replay the events after pos for this watcher.
func (w *watcher) sharedGap() *gapHistory {
	g := w.env.src.sharedGap()
	if g == nil || g == w.noGap || !g.covers(w.pos) {
		return nil
	}
	return g
}

// sharedBehind returns the shared read for watchers that fell behind the
// cache's history if it can replay the events after pos for this watcher.
func (w *watcher) sharedBehind() *gapHistory {
	g := w.env.src.sharedBehind(w.pos)
	if g == nil || g == w.noGap || !g.covers(w.pos) {
		return nil
	}
	return g
}

func (w *watcher) allHandled(evs []*watchcache.Event) bool {
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
func (w *watcher) tryJoin() bool {
	return w.env.hub.join(w, func() bool {
		evs, _, err := w.env.src.eventsSince(w.pos, len(w.revSeen)+1)
		return err == nil && w.allHandled(evs)
	})
}

// catchUpFromStorage replays etcd's history after pos through a storage
// watch until the cache can take over (true), or the watch ends with an
// error event, such as 410 when etcd compacted pos (false). A storage watch
// that just closes returns true: the caller resumes from pos.
func (w *watcher) catchUpFromStorage(ctx context.Context) bool {
	if !w.plan.slotHeld {
		if !w.env.src.acquireSlot(ctx, 0) {
			return false
		}
		w.plan.slotHeld = true
	}
	defer func() {
		w.env.src.releaseSlot(w.plan.slotHeld)
		w.plan.slotHeld = false
	}()
	pred := w.pred
	pred.AllowWatchBookmarks = true
	opts := storage.ListOptions{ResourceVersion: strconv.FormatUint(w.pos, 10), Recursive: w.recursive,
		Predicate: pred, ProgressNotify: true}
	initial := w.plan.storageInitial
	if initial {
		t := true
		opts.SendInitialEvents = &t
		w.plan.storageInitial = false
	}
	sw, err := w.env.src.storageWatch(ctx, w.key, opts)
	if err != nil {
		w.fail(ctx, err, "storage")
		return false
	}
	defer sw.Stop()
	// A filtered stream may deliver nothing: progress notifications tell it
	// how far etcd is, so ask for them while catching up. (etcd answers only
	// when every watch of the stream has caught up.)
	poke := w.env.clk.wall.NewTicker(200 * time.Millisecond)
	defer poke.Stop()
	h := &revHold{idle: w.env.clk.wall.NewTimer(time.Hour)}
	defer h.idle.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-poke.C():
			w.env.src.wantProgress()
		case <-h.idle.C():
			if !w.flush(ctx, h) {
				return false
			}
		case ev, ok := <-sw.ResultChan():
			if !ok {
				return w.pauseBeforeResume(ctx)
			}
			done, keep := w.handleStorageEvent(ctx, ev, &initial, h)
			if done || !keep {
				return keep
			}
		}
	}
}

// revHold keeps the events of the newest revision of a catch-up stream
// until the revision is known complete (a newer event, a bookmark, or a
// pause in the stream), so that an error in the middle of a revision (etcd
// compacted it while the stream replayed it) never leaves it half delivered.
type revHold struct {
	rv   uint64
	evs  []watch.Event
	keys []string
	idle clock.Timer // fires when the stream paused after a held event
}

// holdIdle is the pause after which held events are delivered: etcd
// delivers a revision's events together, so a pause means it is complete.
const holdIdle = 50 * time.Millisecond

func (h *revHold) add(ev watch.Event, rv uint64, key string) {
	h.rv = rv
	h.evs = append(h.evs, ev)
	h.keys = append(h.keys, key)
	h.idle.Reset(holdIdle)
}

func (h *revHold) drop() {
	clear(h.evs)
	h.evs, h.keys = h.evs[:0], h.keys[:0]
}

// flush delivers the held events.
func (w *watcher) flush(ctx context.Context, h *revHold) bool {
	defer h.drop()
	for i, ev := range h.evs {
		w.markHandled(h.rv, h.keys[i])
		if !w.send(ctx, ev, h.rv) {
			return false
		}
	}
	return true
}

// handleStorageEvent processes one event of a catch-up stream. done means
// the cache can take over (keep) or the watch ended (!keep).
func (w *watcher) handleStorageEvent(ctx context.Context, ev watch.Event, initial *bool, h *revHold) (done, keep bool) {
	rv := w.env.objectRV(ev.Object)
	switch ev.Type {
	case watch.Error:
		h.drop()
		w.env.metrics.WatcherTerminated("storage")
		w.send(ctx, ev, w.lastSent)
		return true, false
	case watch.Bookmark:
		if !w.flush(ctx, h) {
			return true, false
		}
		return w.storageBookmark(ctx, ev, rv, initial)
	}
	if *initial {
		return false, w.send(ctx, ev, 0)
	}
	key, err := w.env.keyFunc(ev.Object)
	if err != nil {
		w.fail(ctx, err, "storage")
		return true, false
	}
	if w.handled(rv, key) {
		return false, true
	}
	if len(h.evs) > 0 && h.rv != rv && !w.flush(ctx, h) {
		return true, false
	}
	if w.env.src.cacheHolds(rv - 1) {
		h.drop() // not handled yet: the cache replays them
		w.pos = max(w.pos, rv-1)
		return true, true
	}
	h.add(ev, rv, key)
	return false, true
}

// storageBookmark processes a bookmark of a catch-up stream: the end of
// its initial events, or progress that may let the cache take over.
func (w *watcher) storageBookmark(ctx context.Context, ev watch.Event, rv uint64, initial *bool) (done, keep bool) {
	if *initial {
		if !isInitialEnd(ev) {
			return false, true
		}
		*initial = false
		w.pos = rv
		if w.bookmarks && w.plan.storageAnnotate {
			return false, w.send(ctx, ev, rv)
		}
		return false, true
	}
	if rv < w.pos {
		return false, true
	}
	w.pos = rv
	if w.bookmarks && rv >= w.lastSent && !w.send(ctx, ev, rv) {
		return true, false
	}
	return w.env.src.cacheHolds(rv), true
}

// pauseBeforeResume waits briefly before a closed storage watch is resumed.
func (w *watcher) pauseBeforeResume(ctx context.Context) bool {
	t := w.env.clk.wall.NewTimer(100 * time.Millisecond)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C():
		return true
	}
}

func isInitialEnd(ev watch.Event) bool {
	a, err := meta.Accessor(ev.Object)
	return err == nil && a.GetAnnotations()[storage.InitialEventsAnnotationKey] == "true"
}
