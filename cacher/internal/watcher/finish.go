package watcher

import (
	"context"
	"errors"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/storage"
)

// How a watch ends: out of the hub for good, with an error event when the
// cacher or the storage ended it.

// finish ends the watch: out of dispatch, the final error event if the
// cache ended it, result and done closed.
func (w *Watcher) finish(ctx context.Context) {
	w.env.Hub.Leave(w.e)
	w.env.Source.ReleaseSlot(w.Plan.SlotHeld)
	if cause := context.Cause(ctx); errors.Is(cause, ErrReinitialized) || errors.Is(cause, ErrDiverged) {
		w.sendFinalError(cause)
	}
	close(w.result)
	close(w.done)
	w.env.Metrics.WatchersChanged(-1)
	w.release()
}

// fail ends the watch with an error event for err.
func (w *Watcher) fail(ctx context.Context, err error, reason string) {
	w.env.Metrics.WatcherTerminated(reason)
	st := errorStatus(err)
	w.send(ctx, watch.Event{Type: watch.Error, Object: st}, w.lastSent)
}

// sendFinalError ends a watch aborted by reinitialize (or by a consistency
// check that found the cache diverged in its scope, or by a relist that
// found an object in its scope unreadable, see endWatchesOf) with an error event
// (500 naming the cause), unless its client stops first. The reason is
// InternalError, or the storage's own StoreReadError when the storage watch
// failed on unreadable data (a corrupt object, a corrupt deletion).
func (w *Watcher) sendFinalError(cause error) {
	reason := "reinitialized"
	switch {
	case errors.Is(cause, ErrDiverged):
		reason = "diverged"
	case storage.IsCode(cause, storage.CodeCorruptObj):
		reason = "corrupt" // an object in its scope can no longer be read
	}
	w.env.Metrics.WatcherTerminated(reason)
	st := apierrors.NewInternalError(cause).Status()
	var storageStatus apierrors.APIStatus
	if errors.As(cause, &storageStatus) && storageStatus.Status().Reason == metav1.StatusReasonStoreReadError {
		st.Reason, st.Message = metav1.StatusReasonStoreReadError, cause.Error()
	}
	t := w.env.Wall.NewTimer(finalErrorTimeout)
	defer t.Stop()
	select {
	case w.result <- watch.Event{Type: watch.Error, Object: &st}:
	case <-w.stopped:
	case <-t.C():
	}
}

// ErrReinitialized is the cause with which the cacher ends every watch
// when it gives up on its cache's content (see the cacher's reinitialize):
// the watch then ends with an error event naming the cause.
var ErrReinitialized = errors.New("cacher: watch cache re-initialised")

// ErrDiverged is the cause with which the consistency check ends the
// watches whose scope holds a key where the cache differed from the storage.
var ErrDiverged = errors.New("cacher: the watch cache diverged from the storage")

// finalErrorTimeout bounds how long an ended watch waits for its client to
// take the final error event.
const finalErrorTimeout = 5 * time.Second

// errorStatus is the Status of a watch error event for err: storage's
// one mapping (storage.StatusOf), which FromStatus undoes on the
// consumer's side.
func errorStatus(err error) *metav1.Status {
	st := storage.StatusOf(err)
	return &st
}
