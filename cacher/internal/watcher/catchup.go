package watcher

import (
	"context"
	"errors"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"

	"github.com/listwatch/listwatch/cacher/internal/history"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/watchcache"
)

// catchUp is the watcher's one catch-up loop: it replays history after
// pos until the watcher has joined live dispatch (true) or ended (false).
// Each round asks where the events after pos are: in the cache's history
// (the ring), else in a shared read of the storage's history (Source.Shared,
// replayed by replayShared up to its end), else only in the storage, which
// the watcher's own stream replays (catchUpFromStorage: the cache is being
// re-initialised, or no shared read can serve it); then it asks again.
func (w *Watcher) catchUp(ctx context.Context) bool {
	for ctx.Err() == nil {
		evs, _, err := w.env.Source.EventsSince(w.pos, w.env.CatchUpBatch)
		switch {
		case errors.Is(err, storage.ErrGone) && w.shared() != nil:
			// Left behind by a relist, or fell behind the cache's
			// history (see the cacher's feed_history.go): a read of the
			// storage's history shared with the others serves.
			g := w.sharedRead
			w.sharedRead = nil // not kept beyond this catch-up
			if !w.replayShared(ctx, g) {
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
				w.env.Source.ReleaseSlot(w.Plan.SlotHeld)
				w.Plan.SlotHeld = false
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
// replay the events after pos (see Source.Shared).
func (w *Watcher) shared() *history.Shared {
	if w.Plan.StorageInitial {
		// Its initial events come from the storage's state, which only
		// its own storage watch sends.
		w.sharedRead = nil
		return nil
	}
	w.sharedRead = w.env.Source.Shared(w.pos, w.noShared)
	return w.sharedRead
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

// catchUpFromStorage replays etcd's history after pos through a storage
// watch until the cache can take over (true), or the watch ends with an
// error event, such as 410 when etcd compacted pos (false). A storage watch
// that just closes returns true: the caller resumes from pos.
func (w *Watcher) catchUpFromStorage(ctx context.Context) bool {
	if !w.Plan.SlotHeld {
		if !w.env.Source.AcquireSlot(ctx, 0) {
			return false
		}
		w.Plan.SlotHeld = true
	}
	defer func() {
		w.env.Source.ReleaseSlot(w.Plan.SlotHeld)
		w.Plan.SlotHeld = false
	}()
	pred := w.e.Pred
	pred.AllowWatchBookmarks = true
	// RVAt(0) is RVAny: any state, not the current one.
	opts := storage.ListOptions{ResourceVersion: storage.RVAt(w.pos), Recursive: w.e.Recursive, Predicate: pred, ProgressNotify: true}
	initial := w.Plan.StorageInitial
	if initial {
		t := true
		opts.SendInitialEvents = &t
		w.Plan.StorageInitial = false
	}
	sw, err := w.env.Source.StorageWatch(ctx, w.e.Key, opts)
	if err != nil {
		w.fail(ctx, err, "storage")
		return false
	}
	defer sw.Stop()
	// A filtered stream may deliver nothing: progress notifications tell it
	// how far etcd is, so ask for them while catching up. (etcd answers only
	// when every watch of the stream has caught up.)
	poke := w.env.Wall.NewTicker(200 * time.Millisecond)
	defer poke.Stop()
	h := &held{idle: w.env.Wall.NewTimer(time.Hour)}
	defer h.idle.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-poke.C():
			w.env.Source.WantProgress()
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

// held is the newest revision of a catch-up stream, gathered until it is
// known complete (a newer event, a bookmark, or a pause in the stream: see
// history.Revision).
type held struct {
	history.Revision
	idle clock.Timer // fires when the stream paused after a held event
}

// flush delivers the held events.
func (w *Watcher) flush(ctx context.Context, h *held) bool {
	defer h.Reset()
	for i, ev := range h.Events {
		w.markHandled(h.RV, h.Keys[i])
		if !w.send(ctx, ev, h.RV) {
			return false
		}
	}
	return true
}

// handleStorageEvent processes one event of a catch-up stream. done means
// the cache can take over (keep) or the watch ended (!keep).
func (w *Watcher) handleStorageEvent(ctx context.Context, ev watch.Event, initial *bool, h *held) (done, keep bool) {
	rv := w.env.objectRV(ev.Object)
	switch ev.Type {
	case watch.Error:
		h.Reset()
		w.env.Metrics.WatcherTerminated("storage")
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
	key, err := w.env.KeyFunc(ev.Object)
	if err != nil {
		w.fail(ctx, err, "storage")
		return true, false
	}
	if w.handled(rv, key) {
		return false, true
	}
	if h.Ends(rv, false) && !w.flush(ctx, h) {
		return true, false
	}
	if w.env.Source.CacheHolds(rv - 1) {
		h.Reset() // not handled yet: the cache replays them
		w.pos = max(w.pos, rv-1)
		return true, true
	}
	h.Add(ev, rv, key)
	h.idle.Reset(history.Pause)
	return false, true
}

// storageBookmark processes a bookmark of a catch-up stream: the end of
// its initial events, or progress that may let the cache take over.
func (w *Watcher) storageBookmark(ctx context.Context, ev watch.Event, rv uint64, initial *bool) (done, keep bool) {
	if *initial {
		if !isInitialEnd(ev) {
			return false, true
		}
		*initial = false
		w.pos = rv
		if w.e.Bookmarks && w.Plan.StorageAnnotate {
			return false, w.send(ctx, ev, rv)
		}
		return false, true
	}
	if rv < w.pos {
		return false, true
	}
	w.pos = rv
	if w.e.Bookmarks && rv >= w.lastSent && !w.send(ctx, ev, rv) {
		return true, false
	}
	return w.env.Source.CacheHolds(rv), true
}

// pauseBeforeResume waits briefly before a closed storage watch is resumed.
func (w *Watcher) pauseBeforeResume(ctx context.Context) bool {
	t := w.env.Wall.NewTimer(100 * time.Millisecond)
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
