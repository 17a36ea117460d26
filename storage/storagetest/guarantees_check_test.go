package storagetest

import (
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"
)

// Hand-made history (start RV 9):
//
//	10: create a (seq 1)
//	11: txn: update a (seq 2), create b (seq 3)
//	12: delete a (last seq 2)
//	13: update b (seq 4)
var handExpected = []expectedEvent{
	{watch.Added, 10, "ns/a", "1"},
	{watch.Modified, 11, "ns/a", "2"},
	{watch.Added, 11, "ns/b", "3"},
	{watch.Deleted, 12, "ns/a", "2"},
	{watch.Modified, 13, "ns/b", "4"},
}

func ev(t watch.EventType, rv uint64, key, seq string) observedEvent {
	return observedEvent{Type: t, RV: rv, Key: key, Seq: seq}
}

func bm(rv uint64) observedEvent { return observedEvent{Type: watch.Bookmark, RV: rv} }

func gone() observedEvent {
	return observedEvent{Type: watch.Error, Code: http.StatusGone, Msg: "too old resource version"}
}

var (
	eA10 = ev(watch.Added, 10, "ns/a", "1")
	eA11 = ev(watch.Modified, 11, "ns/a", "2")
	eB11 = ev(watch.Added, 11, "ns/b", "3")
	eA12 = ev(watch.Deleted, 12, "ns/a", "2")
	eB13 = ev(watch.Modified, 13, "ns/b", "4")
)

func TestGuaranteeCheckersOnHandMadeStreams(t *testing.T) {
	cases := []struct {
		name        string
		events      []observedEvent
		noBookmarks bool
		closed      bool
		compactedAt uint64
		goneReq     bool
		want        []string // checkers that must fail; nil: none
	}{
		{name: "valid", events: []observedEvent{eA10, eA11, eB11, bm(11), eA12, eB13, bm(13)}},
		{name: "valid txn in other key order", events: []observedEvent{eA10, eB11, eA11, eA12, eB13}},
		{name: "dropped event of a txn", events: []observedEvent{eA10, eB11, eA12, eB13},
			want: []string{"checkAtomic", "checkReliable"}},
		{name: "dropped last event", events: []observedEvent{eA10, eA11, eB11, eA12},
			want: []string{"checkReliable"}},
		{name: "dropped first event", events: []observedEvent{eA11, eB11, eA12, eB13},
			want: []string{"checkReliable"}},
		{name: "duplicated event", events: []observedEvent{eA10, eA11, eB11, eA12, eA12, eB13},
			want: []string{"checkReliable", "checkUnique"}},
		{name: "reordered revisions", events: []observedEvent{eA10, eA11, eB11, eB13, eA12},
			want: []string{"checkOrdered"}},
		{name: "txn split by a later revision", events: []observedEvent{eA10, eA11, eA12, eB11, eB13},
			want: []string{"checkAtomic", "checkOrdered"}},
		{name: "txn split by a bookmark", events: []observedEvent{eA10, eA11, bm(11), eB11, eA12, eB13},
			want: []string{"checkAtomic", "checkBookmarkable"}},
		{name: "bookmark promise broken", events: []observedEvent{eA10, eA11, eB11, bm(12), eA12, eB13},
			want: []string{"checkBookmarkable"}},
		{name: "bookmark behind a sent event", events: []observedEvent{eA10, eA11, eB11, bm(10), eA12, eB13},
			want: []string{"checkBookmarkable"}},
		{name: "bookmark going backwards", events: []observedEvent{eA10, bm(10), eA11, eB11, bm(11), bm(10), eA12, eB13},
			want: []string{"checkBookmarkable", "checkOrdered"}},
		{name: "bookmark without asking", noBookmarks: true, events: []observedEvent{eA10, eA11, eB11, bm(11), eA12, eB13},
			want: []string{"checkBookmarkable"}},
		{name: "event at the start RV", events: []observedEvent{ev(watch.Added, 9, "ns/z", "0"), eA10, eA11, eB11, eA12, eB13},
			want: []string{"checkOrdered", "checkReliable"}},
		{name: "wrong event type", events: []observedEvent{eA10, ev(watch.Added, 11, "ns/a", "2"), eB11, eA12, eB13},
			want: []string{"checkReliable"}},
		{name: "wrong object version", events: []observedEvent{eA10, eA11, eB11, ev(watch.Deleted, 12, "ns/a", "1"), eB13},
			want: []string{"checkReliable"}},
		{name: "bookmark hides a gap", events: []observedEvent{eA10, bm(12)},
			want: []string{"checkReliable"}},
		{name: "closed silently", closed: true, events: []observedEvent{eA10, eA11, eB11, eA12, eB13},
			want: []string{"checkTermination"}},
		{name: "410 after compaction", compactedAt: 13, events: []observedEvent{eA10, eA11, eB11, gone()}},
		{name: "txn cut by an error", compactedAt: 13, events: []observedEvent{eA10, eA11, gone()},
			want: []string{"checkAtomic", "checkReliable"}},
		{name: "410 at once after compaction", compactedAt: 12, events: []observedEvent{gone()}},
		{name: "410 without compaction", events: []observedEvent{eA10, gone()},
			want: []string{"checkTermination"}},
		{name: "410 for a kept revision", compactedAt: 10, events: []observedEvent{eA10, eA11, eB11, gone()},
			want: []string{"checkTermination"}},
		{name: "other error", events: []observedEvent{eA10, eA11, eB11, eA12, eB13, {Type: watch.Error, Code: 500}},
			want: []string{"checkTermination"}},
		{name: "event after error", compactedAt: 13, events: []observedEvent{eA10, gone(), eA11},
			want: []string{"checkTermination"}},
		{name: "compacted start served", compactedAt: 12, goneReq: true, events: []observedEvent{eA10, eA11, eB11, eA12, eB13},
			want: []string{"checkTermination"}},
		{name: "compacted start answered", compactedAt: 12, goneReq: true, events: []observedEvent{gone()}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := &stream{start: 9, bookmarks: !tc.noBookmarks, expected: handExpected, events: tc.events,
				closed: tc.closed, compactedAt: tc.compactedAt}
			s.goneRequired = tc.goneReq && !s.endedGone()
			var failed []string
			var msgs []string
			for _, c := range streamCheckers {
				if v := c.check(s); len(v) > 0 {
					failed = append(failed, c.name)
					msgs = append(msgs, v...)
				}
			}
			slices.Sort(failed)
			if !slices.Equal(failed, tc.want) {
				t.Errorf("failing checkers %v, want %v; violations:\n%s", failed, tc.want, strings.Join(msgs, "\n"))
			}
			if got := len(checkStream(s)); got != len(msgs) {
				t.Errorf("checkStream reports %d violations, the checkers %d", got, len(msgs))
			}
		})
	}
}

func TestCheckResumable(t *testing.T) {
	orig := &stream{start: 9, expected: handExpected, events: []observedEvent{eA10, eA11, eB11, eA12, eB13}}
	cases := []struct {
		name    string
		from    uint64
		events  []observedEvent
		compact uint64
		ok      bool
	}{
		{"exact suffix", 11, []observedEvent{eA12, eB13}, 0, true},
		{"suffix with other txn order", 10, []observedEvent{eB11, eA11, eA12, eB13}, 0, true},
		{"suffix seen only in part", 10, []observedEvent{eA11, eB11}, 0, true},
		{"missing event", 10, []observedEvent{eA11, eB11, eB13}, 0, false},
		{"repeats the resume RV", 11, []observedEvent{eB11, eA12, eB13}, 0, false},
		{"extra event", 11, []observedEvent{eA12, ev(watch.Added, 12, "ns/c", "9"), eB13}, 0, false},
		{"410 for a compacted RV", 10, []observedEvent{gone()}, 12, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			resumed := &stream{start: tc.from, events: tc.events, compactedAt: tc.compact}
			v := checkResumable(orig, resumed, tc.from)
			if (len(v) == 0) != tc.ok {
				t.Errorf("checkResumable = %v, want ok=%v", v, tc.ok)
			}
		})
	}
}

// TestExpectedStreamTransitions checks the ground-truth expectation of a
// filtered watch: updates into the selection are ADDED, out of it DELETED
// with the previous object.
func TestExpectedStreamTransitions(t *testing.T) {
	obj := func(seq, grp string) *truthObject {
		return &truthObject{key: "ns/a", seq: seq, labels: labels.Set{"grp": grp}, fields: fields.Set{}}
	}
	revs := []truthRevision{
		{rev: 10, events: []truthEvent{{rev: 10, created: true, cur: obj("1", "g0")}}},
		{rev: 11, events: []truthEvent{{rev: 11, cur: obj("2", "g1"), prev: obj("1", "g0")}}},
		{rev: 12, events: []truthEvent{{rev: 12, cur: obj("3", "g1"), prev: obj("2", "g1")}}},
		{rev: 13, events: []truthEvent{{rev: 13, cur: obj("4", "g0"), prev: obj("3", "g1")}}},
		{rev: 14, events: []truthEvent{{rev: 14, cur: obj("5", "g1"), prev: obj("4", "g0")}}},
		{rev: 15, events: []truthEvent{{rev: 15, deleted: true, prev: obj("5", "g1")}}},
	}
	sel := labels.SelectorFromSet(labels.Set{"grp": "g1"})
	match := func(l labels.Set, _ fields.Set) bool { return sel.Matches(l) }
	got := expectedStream(revs, 10, math.MaxUint64, match)
	want := []expectedEvent{
		{watch.Added, 11, "ns/a", "2"},
		{watch.Modified, 12, "ns/a", "3"},
		{watch.Deleted, 13, "ns/a", "3"},
		{watch.Added, 14, "ns/a", "5"},
		{watch.Deleted, 15, "ns/a", "5"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("expectedStream = %v, want %v", got, want)
	}
	if span := expectedStream(revs, 10, 13, match); !slices.Equal(span, want[:3]) {
		t.Errorf("expectedStream up to 13 = %v, want %v", span, want[:3])
	}
	if none := expectedStream(revs, 14, 13, match); len(none) != 0 {
		t.Errorf("expectedStream of an empty span = %v, want none", none)
	}
	all := expectedStream(revs, 12, math.MaxUint64, func(labels.Set, fields.Set) bool { return true })
	wantAll := []expectedEvent{
		{watch.Modified, 13, "ns/a", "4"},
		{watch.Modified, 14, "ns/a", "5"},
		{watch.Deleted, 15, "ns/a", "5"},
	}
	if !slices.Equal(all, wantAll) {
		t.Errorf("expectedStream(all) = %v, want %v", all, wantAll)
	}
}
