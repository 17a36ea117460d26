package cacher

import (
	"context"
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/storage"
)

// How a watch ends: out of the hub for good, with an error event when the
// cacher or the storage ended it.

// finish ends the watch: out of dispatch, the final error event if the
// cache ended it, result and done closed.
func (w *watcher) finish(ctx context.Context) {
	w.env.hub.leave(w)
	w.env.src.releaseSlot(w.plan.slotHeld)
	if cause := context.Cause(ctx); errors.Is(cause, errReinitialized) || errors.Is(cause, errDiverged) {
		w.sendFinalError(cause)
	}
	close(w.result)
	close(w.done)
	w.env.metrics.WatchersChanged(-1)
	w.release()
}

// fail ends the watch with an error event for err.
func (w *watcher) fail(ctx context.Context, err error, reason string) {
	w.env.metrics.WatcherTerminated(reason)
	st := errorStatus(err)
	w.send(ctx, watch.Event{Type: watch.Error, Object: st}, w.lastSent)
}

// sendFinalError ends a watch aborted by reinitialize (or by a consistency
// check that found the cache diverged in its scope, or by a relist that
// found an object in its scope unreadable, see endWatchesOf) with an error event
// (500 naming the cause), unless its client stops first. The reason is
// InternalError, or the storage's own StoreReadError when the storage watch
// failed on unreadable data (a corrupt object, a corrupt deletion).
func (w *watcher) sendFinalError(cause error) {
	reason := "reinitialized"
	switch {
	case errors.Is(cause, errDiverged):
		reason = "diverged"
	case storage.IsCode(cause, storage.CodeCorruptObj):
		reason = "corrupt" // an object in its scope can no longer be read
	}
	w.env.metrics.WatcherTerminated(reason)
	st := apierrors.NewInternalError(cause).Status()
	var storageStatus apierrors.APIStatus
	if errors.As(cause, &storageStatus) && storageStatus.Status().Reason == metav1.StatusReasonStoreReadError {
		st.Reason, st.Message = metav1.StatusReasonStoreReadError, cause.Error()
	}
	t := w.env.clk.wall.NewTimer(finalErrorTimeout)
	defer t.Stop()
	select {
	case w.result <- watch.Event{Type: watch.Error, Object: &st}:
	case <-w.stopped:
	case <-t.C():
	}
}
