package reflector

import (
	"context"
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// watchList streams the initial state through one watch with
// sendInitialEvents: events are collected into a temporary store until the
// bookmark annotated k8s.io/initial-events-end, whose RV then becomes the
// RV of one atomic Replace. The stream stays open and is returned for the
// watch loop to continue with.
func (r *Reflector[T]) watchList(ctx context.Context) (watch.Interface, error) {
	sendInitial := true
	opts := metav1.ListOptions{
		ResourceVersion:      r.rewatchResourceVersion(),
		ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
		SendInitialEvents:    &sendInitial,
		AllowWatchBookmarks:  true,
		TimeoutSeconds:       r.watchTimeoutSeconds(),
	}
	w, err := r.cfg.ListerWatcher.Watch(ctx, opts)
	if err != nil {
		r.noteUnavailable(err)
		return nil, fmt.Errorf("opening watch-list at %q: %w", opts.ResourceVersion, err)
	}
	rv, items, err := r.collectInitialEvents(ctx, w)
	if err != nil {
		w.Stop()
		r.noteUnavailable(err)
		return nil, err
	}
	if err := r.cfg.Store.Replace(items, rv); err != nil {
		w.Stop()
		return nil, fmt.Errorf("replacing store content: %w", err)
	}
	r.setLastSyncRV(rv)
	r.setRVUnavailable(false)
	return w, nil
}

func (r *Reflector[T]) noteUnavailable(err error) {
	if isExpired(err) || isTooLargeResourceVersion(err) {
		r.setRVUnavailable(true)
	}
}

// collectInitialEvents reads w until the initial-events-end bookmark.
func (r *Reflector[T]) collectInitialEvents(ctx context.Context, w watch.Interface) (string, []T, error) {
	temp := newCache[T](nil, nil)
	var transform TransformFunc[T]
	if ts, ok := r.cfg.Store.(interface{ Transformer() TransformFunc[T] }); ok {
		transform = ts.Transformer()
	}
	for {
		var ev watch.Event
		var ok bool
		select {
		case <-ctx.Done():
			return "", nil, ctx.Err()
		case ev, ok = <-w.ResultChan():
		}
		if !ok {
			return "", nil, errWatchClosedEarly
		}
		switch ev.Type {
		case watch.Error:
			return "", nil, fmt.Errorf("watch-list error event: %w", watchEventError(ev.Object))
		case watch.Bookmark:
			if isInitialEventsEnd(ev.Object) {
				return objectRV(ev.Object), temp.List(), nil
			}
		case watch.Added, watch.Modified, watch.Deleted:
			obj, ok := ev.Object.(T)
			if !ok || isNil(obj) {
				return "", nil, fmt.Errorf("watch-list event %s with object %T, want %T", ev.Type, ev.Object, *new(T))
			}
			if transform != nil && ev.Type != watch.Deleted {
				var err error
				if obj, err = transform(obj); err != nil {
					return "", nil, fmt.Errorf("transforming a watch-list object: %w", err)
				}
			}
			if ev.Type == watch.Deleted {
				err := temp.Delete(obj)
				if err != nil {
					return "", nil, err
				}
			} else if err := temp.Add(obj); err != nil {
				return "", nil, err
			}
		}
	}
}

func isInitialEventsEnd(obj any) bool {
	if isNil(obj) {
		return false
	}
	acc, err := meta.Accessor(obj)
	return err == nil && acc.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true"
}
