package storage

import (
	"errors"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestParseWatchRequest(t *testing.T) {
	yes, no := true, false
	notOlder, exact := metav1.ResourceVersionMatchNotOlderThan, metav1.ResourceVersionMatchExact
	bm := SelectionPredicate{AllowWatchBookmarks: true}
	cases := []struct {
		name string
		opts ListOptions
		want WatchRequest
		bad  bool
	}{
		// sendInitialEvents unset: Kubernetes' legacy watch.
		{"unset: latest state, then changes", ListOptions{},
			WatchRequest{Start: WatchWithState, Consistent: true}, false},
		{"0: any state, then changes", ListOptions{ResourceVersion: "0"},
			WatchRequest{Start: WatchWithState}, false},
		{"N: events after N", ListOptions{ResourceVersion: "7"},
			WatchRequest{Start: WatchAfterRev, Rev: 7}, false},
		{"N with bookmarks: events after N", ListOptions{ResourceVersion: "7", Predicate: bm},
			WatchRequest{Start: WatchAfterRev, Rev: 7}, false},
		// sendInitialEvents=false: no state.
		{"unset, no initial events: from now", ListOptions{SendInitialEvents: &no},
			WatchRequest{Start: WatchFromNow}, false},
		{"0, no initial events: from now", ListOptions{ResourceVersion: "0", SendInitialEvents: &no},
			WatchRequest{Start: WatchFromNow}, false},
		{"N, no initial events: events after N", ListOptions{ResourceVersion: "7", SendInitialEvents: &no,
			ResourceVersionMatch: notOlder}, WatchRequest{Start: WatchAfterRev, Rev: 7}, false},
		// sendInitialEvents=true: watch-list.
		{"unset, initial events: consistent state, annotated end", ListOptions{SendInitialEvents: &yes,
			ResourceVersionMatch: notOlder, Predicate: bm},
			WatchRequest{Start: WatchWithState, Consistent: true, Annotate: true}, false},
		{"0, initial events: state, annotated end", ListOptions{ResourceVersion: "0", SendInitialEvents: &yes,
			ResourceVersionMatch: notOlder, Predicate: bm},
			WatchRequest{Start: WatchWithState, Consistent: true, Annotate: true}, false},
		{"N, initial events: state not older than N, annotated end", ListOptions{ResourceVersion: "7",
			SendInitialEvents: &yes, ResourceVersionMatch: notOlder, Predicate: bm},
			WatchRequest{Start: WatchWithState, Rev: 7, Consistent: true, Annotate: true}, false},
		{"initial events without bookmarks: no end bookmark", ListOptions{ResourceVersion: "7", SendInitialEvents: &yes},
			WatchRequest{Start: WatchWithState, Rev: 7, Consistent: true}, false},
		// In-process callers pass a parsed revision.
		{"parsed revision: events after it", ListOptions{Revision: 7},
			WatchRequest{Start: WatchAfterRev, Rev: 7}, false},
		{"parsed revision, initial events: state not older than it", ListOptions{Revision: 7, SendInitialEvents: &yes},
			WatchRequest{Start: WatchWithState, Rev: 7, Consistent: true}, false},
		// Bad input.
		{"parsed revision and RV", ListOptions{Revision: 7, ResourceVersion: "7"}, WatchRequest{}, true},
		{"parsed revision out of range", ListOptions{Revision: 1 << 63}, WatchRequest{}, true},
		{"Exact", ListOptions{ResourceVersion: "7", ResourceVersionMatch: exact}, WatchRequest{}, true},
		{"unknown match", ListOptions{ResourceVersion: "7", ResourceVersionMatch: "Newest"}, WatchRequest{}, true},
		{"malformed RV", ListOptions{ResourceVersion: "x"}, WatchRequest{}, true},
		{"negative RV", ListOptions{ResourceVersion: "-3"}, WatchRequest{}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseWatchRequest(tc.opts, APIObjectVersioner{})
			if tc.bad {
				if err == nil {
					t.Fatalf("got %+v, want an error", got)
				}
				var se *Error
				if !errors.As(err, &se) {
					t.Fatalf("error %v (%T) is not a *storage.Error", err, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Fatalf("got %+v (%v), want %+v (%v)", got, got.Start, tc.want, tc.want.Start)
			}
		})
	}
}
