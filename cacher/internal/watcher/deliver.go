package watcher

import (
	"context"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/cacher/internal/hub"
	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/watchcache"
)

// What a watcher's client receives: the events it has not handled yet,
// converted for its predicate, bookmarks, and its initial state.

// deliver converts ev, an event of history, for this watcher and sends
// it, unless it was handled already or does not concern the watcher;
// false when the watch ended.
func (w *Watcher) deliver(ctx context.Context, ev *watchcache.Event) bool {
	return w.deliverEvent(ctx, ev, nil, true)
}

// deliverEvent is deliver for ev, which p, when not nil, published in the
// hub's log (encoded watchers share its wrapper). With block false (the
// hub delivering for a watcher with no goroutine) it gives up, with nothing changed,
// when the client's channel is full or the goroutine must act: the watch
// ended, or the event ends it.
func (w *Watcher) deliverEvent(ctx context.Context, ev *watchcache.Event, p *hub.Published, block bool) bool {
	if ev.Type == watch.Bookmark {
		if !w.e.Bookmarks || ev.RV < w.lastSent || ev.RV < w.pos {
			return true
		}
		out, ok := w.bookmarkEvent(ev.RV, false)
		return !ok || w.sendOut(ctx, out, ev.RV, block)
	}
	if w.handled(ev.RV, ev.Key()) {
		return true
	}
	out, ok := w.convertWith(ev, p)
	switch {
	case !ok:
	case out.Type == watch.Error:
		// The object could not be decoded: the error ends the watch.
		if !block {
			return false
		}
		w.markHandled(ev.RV, ev.Key())
		w.env.Metrics.WatcherTerminated("decode")
		w.send(ctx, out, w.lastSent)
		return false
	case !w.sendOut(ctx, out, ev.RV, block):
		return false
	}
	w.markHandled(ev.RV, ev.Key())
	return true
}

// handled reports whether the change of key at rv was handled already.
func (w *Watcher) handled(rv uint64, key string) bool {
	return rv <= w.pos || (rv == w.revRV && slices.Contains(w.revSeen, key))
}

// markHandled records the change of key at rv as handled; all revisions
// before rv are then complete.
func (w *Watcher) markHandled(rv uint64, key string) {
	if rv != w.revRV {
		w.pos = max(w.pos, rv-1)
		w.revRV, w.revSeen = rv, w.revSeen[:0]
	}
	w.revSeen = append(w.revSeen, key)
}

// convert derives the event this watcher sees from the change: a change
// that makes an object (stop) match its predicate is an ADDED (DELETED).
func (w *Watcher) convert(ev *watchcache.Event) (watch.Event, bool) { return w.convertWith(ev, nil) }

// convertWith is convert; an encoded watcher takes the wrapper of the
// change's current object from shared, its entry in the hub's log (nil:
// one of its own).
func (w *Watcher) convertWith(ev *watchcache.Event, shared *hub.Published) (watch.Event, bool) {
	if !w.e.InScope(ev.Key()) {
		return watch.Event{}, false
	}
	prevOK := ev.Prev != nil && w.e.Matches(ev.Prev)
	curOK := ev.Type != watch.Deleted && w.e.Matches(ev.Cur)
	typ, el := watch.Deleted, ev.Cur
	switch {
	case ev.Type == watch.Deleted:
		if !prevOK {
			return watch.Event{}, false
		}
	case curOK && prevOK:
		typ = watch.Modified
	case curOK:
		typ = watch.Added
	case prevOK:
		el = ev.Prev
	default:
		return watch.Event{}, false
	}
	obj, err := el.Object()
	if err != nil {
		return watch.Event{Type: watch.Error, Object: errorStatus(err)}, true
	}
	if el == ev.Prev {
		// The object leaves the watch: its last state, at the change's RV.
		obj = obj.DeepCopyObject()
		if err := w.env.Versioner.UpdateObject(obj, ev.RV); err != nil {
			return watch.Event{}, false
		}
	}
	return watch.Event{Type: typ, Object: w.carry(ev, el, obj, shared)}, true
}

func (w *Watcher) send(ctx context.Context, ev watch.Event, rv uint64) bool {
	return w.sendOut(ctx, ev, rv, true)
}

// sendOut sends ev on result, waiting for room if block; false when the
// watch ended (or, without block, result is full).
func (w *Watcher) sendOut(ctx context.Context, ev watch.Event, rv uint64, block bool) bool {
	if ctx != nil && ctx.Err() != nil { // nil: a watcher not started (dispatch's tests)
		// Ended (by its client, or by the cacher at a revision it cannot
		// deliver): nothing after that point, even to a reading client.
		return false
	}
	select {
	case w.result <- ev:
		w.lastSent = max(w.lastSent, rv)
		return true
	default:
		if !block {
			return false
		}
	}
	select {
	case w.result <- ev:
		w.lastSent = max(w.lastSent, rv)
		return true
	case <-ctx.Done():
		return false
	}
}

func (w *Watcher) sendBookmark(ctx context.Context, rv uint64, initialEnd bool) bool {
	ev, ok := w.bookmarkEvent(rv, initialEnd)
	if !ok {
		return true
	}
	return w.send(ctx, ev, rv)
}

// bookmarkEvent builds a BOOKMARK at rv; false if the object cannot carry it.
func (w *Watcher) bookmarkEvent(rv uint64, initialEnd bool) (watch.Event, bool) {
	obj := w.env.NewFunc()
	if err := w.env.Versioner.UpdateObject(obj, rv); err != nil {
		return watch.Event{}, false
	}
	if initialEnd {
		if a, err := meta.Accessor(obj); err == nil {
			a.SetAnnotations(map[string]string{storage.InitialEventsAnnotationKey: "true"})
		}
	}
	return watch.Event{Type: watch.Bookmark, Object: obj}, true
}

// sendInitial sends the initial state as ADDED events, then the
// initial-events-end bookmark when asked for.
func (w *Watcher) sendInitial(ctx context.Context) bool {
	init := w.Plan.Initial
	w.Plan.Initial = nil
	for _, el := range init.Items {
		obj, err := el.Object()
		if err != nil {
			w.fail(ctx, err, "decode")
			return false
		}
		if !w.send(ctx, watch.Event{Type: watch.Added, Object: w.carry(nil, el, obj, nil)}, 0) {
			return false
		}
	}
	w.pos = init.RV
	if init.Annotate && w.e.Bookmarks {
		return w.sendBookmark(ctx, init.RV, true)
	}
	return true
}

// carry returns obj, the object a watcher delivers for element el of
// change ev (nil for an initial event), as the watcher's client asked:
// as it is (Watch), or wrapped with its encodings (WatchEncoded). Every
// watcher of a change shares the change's encodings of its current
// object, and the watchers of an entry of the hub's log (shared not nil)
// the wrapper too;
// an object of its own (the previous state stamped with the change's RV)
// and an initial event's object get encodings of their own, seeded with
// the cached encoding when it is the object's.
func (w *Watcher) carry(ev *watchcache.Event, el *watchcache.Element, obj runtime.Object, shared *hub.Published) runtime.Object {
	if !w.Encoded {
		return obj
	}
	switch {
	case ev != nil && el == ev.Cur && shared != nil:
		return shared.Wrapper(obj)
	case ev != nil && el == ev.Cur:
		return &storage.EncodedObject{Object: obj, Encodings: ev.Encodings()}
	case ev == nil:
		return &storage.EncodedObject{Object: obj, Encodings: el.Encodings()}
	default:
		return &storage.EncodedObject{Object: obj, Encodings: storage.NewEncodings("", nil)}
	}
}
