package storage

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WatchStart is where a watch starts.
type WatchStart int

const (
	// WatchAfterRev delivers the events after WatchRequest.Rev (RV N with
	// sendInitialEvents unset or false).
	WatchAfterRev WatchStart = iota
	// WatchFromNow delivers the events after the storage's current
	// revision, read before Watch returns (RV "" or "0" with
	// sendInitialEvents=false).
	WatchFromNow
	// WatchWithState first sends the state as ADDED events, then the
	// events after it (sendInitialEvents=true, or RV "" or "0" with
	// sendInitialEvents unset).
	WatchWithState
)

// String names the start, for logs and test failures.
func (s WatchStart) String() string {
	switch s {
	case WatchAfterRev:
		return "AfterRev"
	case WatchFromNow:
		return "FromNow"
	case WatchWithState:
		return "WithState"
	}
	return fmt.Sprintf("WatchStart(%d)", int(s))
}

// WatchRequest is where the resource-version, resource-version-match,
// sendInitialEvents and allowWatchBookmarks options of a Watch start it,
// per the table in the package doc.
type WatchRequest struct {
	// Start says where the watch starts.
	Start WatchStart
	// Rev is, for WatchAfterRev, the revision the events follow; for
	// WatchWithState, the revision the state must not be older than (0:
	// no bound). 0 for WatchFromNow.
	Rev uint64
	// Consistent asks, for WatchWithState, for a state at least as new as
	// the storage's current revision (RV "", or sendInitialEvents=true).
	Consistent bool
	// Annotate asks, for WatchWithState, to end the initial events with a
	// BOOKMARK annotated with InitialEventsAnnotationKey
	// (sendInitialEvents=true with bookmarks allowed).
	Annotate bool
}

// ParseWatchRequest validates the options of a Watch and returns where it
// starts: the one place that decides it. Errors wrap ErrInvalidArgument.
//
// A watch is never exact: resourceVersionMatch may be "" or NotOlderThan.
func ParseWatchRequest(opts ListOptions) (WatchRequest, error) {
	switch opts.ResourceVersionMatch {
	case "", metav1.ResourceVersionMatchNotOlderThan:
	case metav1.ResourceVersionMatchExact:
		return WatchRequest{}, NewInvalidArgumentError("resourceVersionMatch=Exact is not supported for watch", nil)
	default:
		return WatchRequest{}, NewInvalidArgumentError(fmt.Sprintf("unknown resourceVersionMatch %q", opts.ResourceVersionMatch), nil)
	}
	rv, err := opts.ResourceVersion.validRevision()
	if err != nil {
		return WatchRequest{}, err
	}
	sie := opts.SendInitialEvents
	switch {
	case sie != nil && *sie:
		// Watch-list: a state not older than RV (and at least the current
		// revision), then the annotated bookmark.
		return WatchRequest{Start: WatchWithState, Rev: rv, Consistent: true,
			Annotate: opts.Predicate.AllowWatchBookmarks}, nil
	case sie == nil && rv == 0:
		// Legacy "" (the latest state) and "0" (any state), then changes.
		return WatchRequest{Start: WatchWithState, Consistent: opts.ResourceVersion.IsUnset()}, nil
	case rv == 0:
		return WatchRequest{Start: WatchFromNow}, nil
	}
	return WatchRequest{Start: WatchAfterRev, Rev: rv}, nil
}
