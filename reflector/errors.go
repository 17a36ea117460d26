package reflector

import (
	"errors"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// Error classification. Every check goes through apimachinery's status
// helpers (which unwrap), never through message text.

// isExpired reports a 410: the requested resource version (or continue
// token) is older than the server's history.
func isExpired(err error) bool {
	return apierrors.IsResourceExpired(err) || apierrors.IsGone(err)
}

// isTooLargeResourceVersion reports a request for an RV the server has not
// reached yet.
func isTooLargeResourceVersion(err error) bool {
	return apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge)
}

// isRetriable reports errors after which the same watch is retried after a
// backoff, without relisting: overload, unavailability, timeouts and
// refused connections.
func isRetriable(err error) bool {
	return apierrors.IsTooManyRequests(err) ||
		apierrors.IsServiceUnavailable(err) ||
		apierrors.IsServerTimeout(err) ||
		apierrors.IsTimeout(err) ||
		utilnet.IsConnectionRefused(err) ||
		utilnet.IsConnectionReset(err)
}

// errWatchClosedEarly is returned when a watch-list stream ends before its
// initial-events-end bookmark.
var errWatchClosedEarly = errors.New("reflector: watch closed before the initial events ended")
