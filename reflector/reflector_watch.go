package reflector

import (
	"context"
	"errors"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/watch"
)

// watchLoop watches from the last synced RV, reopening the watch after a
// normal end or a retriable error. w, when not nil, is an already open
// stream (from watch-list) to continue with. It returns nil when ctx is
// done, and the error that requires a relist otherwise.
func (r *Reflector[T]) watchLoop(ctx context.Context, w watch.Interface) error {
	for ctx.Err() == nil {
		fromRV := r.LastSyncResourceVersion()
		if w == nil {
			var err error
			w, err = r.cfg.ListerWatcher.Watch(ctx, r.listOptionsForWatch())
			if err != nil {
				if ctx.Err() != nil {
					return nil
				}
				if isRetriable(err) {
					r.reportError(fmt.Errorf("opening watch: %w", err))
					if !sleepCtx(ctx, r.retryDelay(err)) {
						return nil
					}
					continue
				}
				return fmt.Errorf("opening watch at %q: %w", fromRV, err)
			}
		}
		start := time.Now()
		events, err := r.handleWatch(ctx, w, fromRV != "" && fromRV != "0")
		w.Stop()
		w = nil
		if err == nil && events == 0 && time.Since(start) < veryShortWatch {
			// A server that ends every watch at once would otherwise be
			// hammered with re-watches: treat it as a retriable error.
			err = errVeryShortWatch
		}
		switch {
		case ctx.Err() != nil:
			return nil
		case errors.Is(err, errRelist):
			r.setRVUnavailable(true) // the list is a consistent read
			return err
		case err == nil:
			r.log.Debug("watch ended, resuming", "rv", r.LastSyncResourceVersion())
		case errors.Is(err, errVeryShortWatch):
			r.reportError(err)
			if !sleepCtx(ctx, r.delay()) {
				return nil
			}
		case isRetriable(err):
			r.reportError(err)
			if !sleepCtx(ctx, r.retryDelay(err)) {
				return nil
			}
		default:
			return err
		}
	}
	return nil
}

// veryShortWatch: a watch that ends normally sooner than this without any
// event is suspect (see errVeryShortWatch).
const veryShortWatch = time.Second

// errVeryShortWatch reports a watch that ended normally at once, with no
// event; the reflector backs off before re-watching.
var errVeryShortWatch = errors.New("reflector: watch ended immediately without any event")

// handleWatch applies a watch's events to the store until the stream ends
// (nil), delivers an error event (that error), or ctx is done. It returns
// the number of events received.
// propagateRV says whether ADDED events may advance the last synced RV: a
// watch from "" or "0" starts with synthetic ADDED events in no RV order,
// so the RV only moves once a non-ADDED event or a bookmark arrives.
func (r *Reflector[T]) handleWatch(ctx context.Context, w watch.Interface, propagateRV bool) (events int, err error) {
	for ; ; events++ {
		var ev watch.Event
		var ok bool
		select {
		case <-ctx.Done():
			return events, ctx.Err()
		case <-r.relist:
			return events, errRelist
		case ev, ok = <-w.ResultChan():
		}
		if !ok {
			return events, nil
		}
		switch ev.Type {
		case watch.Error:
			return events, fmt.Errorf("watch error event: %w", watchEventError(ev.Object))
		case watch.Bookmark:
			propagateRV = true
			r.setLastSyncRV(objectRV(ev.Object))
		case watch.Added, watch.Modified, watch.Deleted:
			if ev.Type != watch.Added {
				propagateRV = true
			}
			r.applyEvent(ev, propagateRV)
		default:
			r.reportError(fmt.Errorf("unexpected watch event type %q", ev.Type))
		}
	}
}

// applyEvent writes one event to the store.
func (r *Reflector[T]) applyEvent(ev watch.Event, propagateRV bool) {
	obj, ok := ev.Object.(T)
	if !ok || isNil(obj) {
		r.reportError(fmt.Errorf("watch event %s with object %T, want %T", ev.Type, ev.Object, *new(T)))
		return
	}
	var err error
	switch ev.Type {
	case watch.Added:
		err = r.cfg.Store.Add(obj)
	case watch.Modified:
		err = r.cfg.Store.Update(obj)
	case watch.Deleted:
		err = r.cfg.Store.Delete(obj)
	}
	if err != nil {
		r.reportError(fmt.Errorf("applying %s of %s/%s: %w", ev.Type, obj.GetNamespace(), obj.GetName(), err))
	}
	if propagateRV {
		r.setLastSyncRV(obj.GetResourceVersion())
	}
}

func objectRV(obj any) string {
	if isNil(obj) {
		return ""
	}
	acc, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	return acc.GetResourceVersion()
}
