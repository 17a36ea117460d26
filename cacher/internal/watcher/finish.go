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
// found an object in its scope unreadable or uncacheable, see endWatches)
// with an error event (see finalStatus), unless its client stops first.
func (w *Watcher) sendFinalError(cause error) {
	reason := "reinitialized"
	switch {
	case errors.Is(cause, ErrDiverged):
		reason = "diverged"
	case storage.IsCode(cause, storage.CodeCorruptObj):
		reason = "corrupt" // an object in its scope can no longer be read
	}
	w.env.Metrics.WatcherTerminated(reason)
	st := finalStatus(cause)
	t := w.env.Wall.NewTimer(finalErrorTimeout)
	defer t.Stop()
	select {
	case w.result <- watch.Event{Type: watch.Error, Object: &st}:
	case <-w.stopped:
	case <-t.C():
	}
}

// finalStatus is what the client of a watch the cacher ended is told: a
// 500 saying why in words that name no storage key and quote no storage,
// etcd or gRPC error (cause carries those; the cacher logged them once,
// when it ended the watches). When objects in the watch's scope can no
// longer be read or held (a storage error with reason StoreReadError), the
// reason is StoreReadError and the message the storage error's
// ClientMessage, without the keys.
func finalStatus(cause error) metav1.Status {
	msg := "the watch cache was re-initialised; list again"
	if errors.Is(cause, ErrDiverged) {
		msg = "the watch cache diverged from the storage; list again"
	}
	st := apierrors.NewInternalError(errors.New(msg)).ErrStatus
	st.Message, st.Details = msg, nil
	var se *storage.Error
	if errors.As(cause, &se) && se.Status().Reason == metav1.StatusReasonStoreReadError {
		st.Reason, st.Message = metav1.StatusReasonStoreReadError, se.ClientMessage()
	}
	return st
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
