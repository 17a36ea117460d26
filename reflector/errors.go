package reflector

import (
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilnet "k8s.io/apimachinery/pkg/util/net"

	"github.com/listwatch/listwatch/storage"
)

// Error classification. Every check is errors.Is against a storage
// sentinel, after typed: whatever a ListerWatcher returns (an
// *storage.Error from the in-process storage or from httplw, or an
// apimachinery StatusError from some other client), never message text.

// typed returns err as a *storage.Error when it carries a Status a storage
// code stands for (storage.FromStatus), else err unchanged.
func typed(err error) error {
	var se *storage.Error
	if err == nil || errors.As(err, &se) {
		return err
	}
	var api apierrors.APIStatus
	if !errors.As(err, &api) {
		return err
	}
	st := api.Status()
	if back := storage.FromStatus(&st); errors.As(back, &se) {
		return errors.Join(err, se)
	}
	return err
}

// watchEventError is the error a watch.Error event stands for: its Status
// turned back into a *storage.Error.
func watchEventError(obj runtime.Object) error {
	if st, ok := obj.(*metav1.Status); ok {
		return storage.FromStatus(st)
	}
	return typed(apierrors.FromObject(obj))
}

// isExpired reports a 410: the requested resource version (or continue
// token) is older than the server's history.
func isExpired(err error) bool {
	return errors.Is(typed(err), storage.ErrGone)
}

// isTooLargeResourceVersion reports a request for an RV the server has not
// reached yet.
func isTooLargeResourceVersion(err error) bool {
	return errors.Is(typed(err), storage.ErrTooLargeResourceVersion)
}

// isRetriable reports errors after which the same watch is retried after a
// backoff, without relisting: overload, unavailability, timeouts and
// refused connections.
func isRetriable(err error) bool {
	err = typed(err)
	return errors.Is(err, storage.ErrTooManyRequests) ||
		errors.Is(err, storage.ErrNotReady) ||
		errors.Is(err, storage.ErrUnavailable) ||
		errors.Is(err, storage.ErrTimeout) ||
		errors.Is(err, storage.ErrTooLargeResourceVersion) ||
		utilnet.IsConnectionRefused(err) ||
		utilnet.IsConnectionReset(err)
}

// errWatchClosedEarly is returned when a watch-list stream ends before its
// initial-events-end bookmark.
var errWatchClosedEarly = errors.New("reflector: watch closed before the initial events ended")
