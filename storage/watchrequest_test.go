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
		{"0: any state, then changes", ListOptions{ResourceVersion: RVAny},
			WatchRequest{Start: WatchWithState}, false},
		{"N: events after N", ListOptions{ResourceVersion: RVAt(7)},
			WatchRequest{Start: WatchAfterRev, Rev: 7}, false},
		{"N with bookmarks: events after N", ListOptions{ResourceVersion: RVAt(7), Predicate: bm},
			WatchRequest{Start: WatchAfterRev, Rev: 7}, false},
		// sendInitialEvents=false: no state.
		{"unset, no initial events: from now", ListOptions{SendInitialEvents: &no},
			WatchRequest{Start: WatchFromNow}, false},
		{"0, no initial events: from now", ListOptions{ResourceVersion: RVAny, SendInitialEvents: &no},
			WatchRequest{Start: WatchFromNow}, false},
		{"N, no initial events: events after N", ListOptions{ResourceVersion: RVAt(7), SendInitialEvents: &no,
			ResourceVersionMatch: notOlder}, WatchRequest{Start: WatchAfterRev, Rev: 7}, false},
		// sendInitialEvents=true: watch-list.
		{"unset, initial events: consistent state, annotated end", ListOptions{SendInitialEvents: &yes,
			ResourceVersionMatch: notOlder, Predicate: bm},
			WatchRequest{Start: WatchWithState, Consistent: true, Annotate: true}, false},
		{"0, initial events: state, annotated end", ListOptions{ResourceVersion: RVAny, SendInitialEvents: &yes,
			ResourceVersionMatch: notOlder, Predicate: bm},
			WatchRequest{Start: WatchWithState, Consistent: true, Annotate: true}, false},
		{"N, initial events: state not older than N, annotated end", ListOptions{ResourceVersion: RVAt(7),
			SendInitialEvents: &yes, ResourceVersionMatch: notOlder, Predicate: bm},
			WatchRequest{Start: WatchWithState, Rev: 7, Consistent: true, Annotate: true}, false},
		{"initial events without bookmarks: no end bookmark", ListOptions{ResourceVersion: RVAt(7), SendInitialEvents: &yes},
			WatchRequest{Start: WatchWithState, Rev: 7, Consistent: true}, false},
		// Bad input.
		{"revision out of range", ListOptions{ResourceVersion: RVAt(1 << 63)}, WatchRequest{}, true},
		{"Exact", ListOptions{ResourceVersion: RVAt(7), ResourceVersionMatch: exact}, WatchRequest{}, true},
		{"unknown match", ListOptions{ResourceVersion: RVAt(7), ResourceVersionMatch: "Newest"}, WatchRequest{}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseWatchRequest(tc.opts)
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
