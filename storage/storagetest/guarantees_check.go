package storagetest

import (
	"cmp"
	"fmt"
	"net/http"
	"slices"

	"k8s.io/apimachinery/pkg/watch"
)

// observedEvent is one event a watcher received, reduced to what the
// checkers compare.
type observedEvent struct {
	Type watch.EventType
	RV   uint64 // the object's RV; for a bookmark, the bookmark's RV
	Key  string // namespace/name
	Seq  string // the write's seqAnnotation
	Code int32  // for an Error event, the status code (0 if not a *metav1.Status)
	Msg  string // for an Error event, the message
}

func (e observedEvent) String() string {
	switch e.Type {
	case watch.Bookmark:
		return fmt.Sprintf("BOOKMARK@%d", e.RV)
	case watch.Error:
		return fmt.Sprintf("ERROR(%d %s)", e.Code, e.Msg)
	}
	return fmt.Sprintf("%s %s@%d#%s", e.Type, e.Key, e.RV, e.Seq)
}

func (e expectedEvent) String() string {
	return fmt.Sprintf("%s %s@%d#%s", e.Type, e.Key, e.RV, e.Seq)
}

func (e observedEvent) isData() bool {
	return e.Type == watch.Added || e.Type == watch.Modified || e.Type == watch.Deleted
}

func (e observedEvent) expected() expectedEvent {
	return expectedEvent{Type: e.Type, RV: e.RV, Key: e.Key, Seq: e.Seq}
}

// stream is one watcher's received events with what the checkers need to
// judge them.
type stream struct {
	// start is the RV the watch started from (events must be after it).
	start uint64
	// bookmarks reports whether the watcher allowed bookmarks.
	bookmarks bool
	// expected is every event the watcher must receive after start,
	// computed from the complete ground truth.
	expected []expectedEvent
	// events are the received events, in order.
	events []observedEvent
	// closed reports that the result channel was closed by the store before
	// the checker stopped the watch.
	closed bool
	// compactedAt is the revision etcd was compacted to while the watch ran
	// or before it started (0: no compaction). A 410 error is legitimate only
	// for a watcher that has seen nothing after it: the changes at the
	// compaction revision itself may have lost their previous values.
	compactedAt uint64
	// goneRequired: the watch started at a revision compacted before it
	// started, so it must end with a 410 error event.
	goneRequired bool
	// lenientCompaction accepts an error event of any code where a 410
	// would be legitimate.
	lenientCompaction bool
}

// checker judges one stream and returns its violations.
type checker struct {
	name  string
	check func(s *stream) []string
}

// streamCheckers are the named checks run on every watcher's stream.
var streamCheckers = []checker{
	{"checkOrdered", checkOrdered},
	{"checkUnique", checkUnique},
	{"checkAtomic", checkAtomic},
	{"checkBookmarkable", checkBookmarkable},
	{"checkReliable", checkReliable},
	{"checkTermination", checkTermination},
}

// checkStream runs every checker on s and returns the violations, prefixed
// with the checker's name.
func checkStream(s *stream) []string {
	var out []string
	for _, c := range streamCheckers {
		for _, v := range c.check(s) {
			out = append(out, c.name+": "+v)
		}
	}
	return out
}

// dataEvents returns the ADDED/MODIFIED/DELETED events received before any
// error event.
func (s *stream) dataEvents() []observedEvent {
	var out []observedEvent
	for _, e := range s.events {
		if e.Type == watch.Error {
			break
		}
		if e.isData() {
			out = append(out, e)
		}
	}
	return out
}

// lastSeen is the highest RV the watcher was told about, by an event or a
// bookmark, before any error.
func (s *stream) lastSeen() uint64 {
	last := s.start
	for _, e := range s.events {
		if e.Type == watch.Error {
			break
		}
		last = max(last, e.RV)
	}
	return last
}

// endedGone reports whether the stream ended with a 410 error event (or
// any error event, when lenientCompaction is set).
func (s *stream) endedGone() bool {
	for _, e := range s.events {
		if e.Type == watch.Error {
			return e.Code == http.StatusGone || s.lenientCompaction
		}
	}
	return false
}

// checkOrdered: events arrive in increasing RV order, all after the start RV;
// bookmarks never go backwards.
func checkOrdered(s *stream) []string {
	var out []string
	var lastEvent, lastBookmark uint64
	for i, e := range s.events {
		switch {
		case e.isData():
			if e.RV <= s.start {
				out = append(out, fmt.Sprintf("event %d %v is not after the start RV %d", i, e, s.start))
			}
			if e.RV < lastEvent {
				out = append(out, fmt.Sprintf("event %d %v after an event at RV %d", i, e, lastEvent))
			}
			lastEvent = max(lastEvent, e.RV)
		case e.Type == watch.Bookmark:
			if e.RV < lastBookmark {
				out = append(out, fmt.Sprintf("bookmark %d at RV %d after a bookmark at %d", i, e.RV, lastBookmark))
			}
			lastBookmark = max(lastBookmark, e.RV)
		}
	}
	return out
}

// checkUnique: no event (revision and key) is delivered twice.
func checkUnique(s *stream) []string {
	type id struct {
		rv  uint64
		key string
	}
	var out []string
	seen := map[id]int{}
	for i, e := range s.events {
		if !e.isData() {
			continue
		}
		k := id{e.RV, e.Key}
		if j, dup := seen[k]; dup {
			out = append(out, fmt.Sprintf("event %d %v duplicates event %d", i, e, j))
			continue
		}
		seen[k] = i
	}
	return out
}

// checkAtomic: the events of one revision that match the watcher arrive
// together (nothing in between) and in full.
func checkAtomic(s *stream) []string {
	want := map[uint64]int{}
	for _, e := range s.expected {
		want[e.RV]++
	}
	var out []string
	got := map[uint64]int{}
	var cur uint64 // the revision being delivered
	closedRevs := map[uint64]bool{}
	for i, e := range s.events {
		if e.Type == watch.Error {
			if cur != 0 && got[cur] < want[cur] && !s.lenientCompaction {
				out = append(out, fmt.Sprintf("revision %d cut by %v after %d of its %d events", cur, e, got[cur], want[cur]))
			}
			break
		}
		if !e.isData() {
			if cur != 0 && got[cur] < want[cur] {
				out = append(out, fmt.Sprintf("revision %d split by %v at %d", cur, e, i))
			}
			if cur != 0 {
				closedRevs[cur] = true
			}
			cur = 0
			continue
		}
		if e.RV != cur {
			if cur != 0 {
				closedRevs[cur] = true
			}
			if closedRevs[e.RV] {
				out = append(out, fmt.Sprintf("revision %d resumed at event %d %v after other events", e.RV, i, e))
			}
			cur = e.RV
		}
		got[e.RV]++
	}
	// A revision whose events all arrived may not be followed by more of
	// them; one that arrived in part is only complete if nothing followed
	// (the watch ended in the middle of it, which checkReliable judges).
	revs := make([]uint64, 0, len(got))
	for rv := range got {
		revs = append(revs, rv)
	}
	slices.Sort(revs)
	for _, rv := range revs {
		if got[rv] < want[rv] && rv != cur {
			out = append(out, fmt.Sprintf("revision %d delivered %d of its %d events", rv, got[rv], want[rv]))
		}
	}
	return out
}

// checkBookmarkable: bookmarks only when allowed; a bookmark at RV b is never
// behind an event already sent and is never followed by an event at or below b.
func checkBookmarkable(s *stream) []string {
	var out []string
	var lastEvent, lastBookmark uint64
	for i, e := range s.events {
		switch {
		case e.Type == watch.Bookmark:
			if !s.bookmarks {
				out = append(out, fmt.Sprintf("bookmark %d at RV %d sent to a watcher that did not allow bookmarks", i, e.RV))
			}
			if e.RV < lastEvent {
				out = append(out, fmt.Sprintf("bookmark %d at RV %d is behind event RV %d already sent", i, e.RV, lastEvent))
			}
			lastBookmark = max(lastBookmark, e.RV)
		case e.isData():
			if e.RV <= lastBookmark {
				out = append(out, fmt.Sprintf("event %d %v breaks the promise of bookmark at RV %d", i, e, lastBookmark))
			}
			lastEvent = max(lastEvent, e.RV)
		}
	}
	return out
}

// checkReliable: no gaps and nothing made up. Every expected event with RV in
// (start, last seen] arrived, where last seen counts bookmarks; a stream the
// checker stopped (rather than one ended by a 410) must hold every expected
// event. Every received event is one of the expected ones, with the right
// type and object version.
func checkReliable(s *stream) []string {
	limit := ^uint64(0)
	if s.endedGone() {
		limit = s.lastSeen()
		if s.lenientCompaction {
			limit-- // the last revision may have been cut by the error
		}
	}
	want := map[expectedEvent]int{}
	for _, e := range s.expected {
		want[e]++
	}
	var out []string
	for i, e := range s.dataEvents() {
		k := e.expected()
		if want[k] > 0 {
			want[k]--
			continue
		}
		out = append(out, fmt.Sprintf("event %d %v was not expected (wrong type or version, or a duplicate)", i, e))
	}
	var missing []string
	for _, e := range s.expected {
		if want[e] > 0 && e.RV <= limit {
			want[e]--
			missing = append(missing, e.String())
		}
	}
	if len(missing) > 0 {
		n := len(missing)
		if n > 5 {
			missing = append(missing[:5], "...")
		}
		out = append(out, fmt.Sprintf("%d expected events missing: %v", n, missing))
	}
	return out
}

// checkTermination: a watch ends in-band only with a 410 error event, only
// when etcd compacted a revision it still needed, and nothing follows the
// error; a watch never ends silently.
func checkTermination(s *stream) []string {
	var out []string
	for i, e := range s.events {
		if e.Type != watch.Error {
			continue
		}
		if i != len(s.events)-1 {
			out = append(out, fmt.Sprintf("%d events after error event %d %v", len(s.events)-1-i, i, e))
		}
		switch {
		case e.Code != http.StatusGone && !s.lenientCompaction:
			out = append(out, fmt.Sprintf("unexpected error event %v", e))
		case s.compactedAt == 0:
			out = append(out, fmt.Sprintf("error event %v without a compaction", e))
		case s.lastSeen() > s.compactedAt:
			// Etcd keeps every revision after the compaction revision c
			// with the previous values of their changes; the changes at c
			// itself may have lost theirs.
			out = append(out, fmt.Sprintf("error event %v although every revision after %d is kept (compacted at %d)",
				e, s.lastSeen(), s.compactedAt))
		}
		return out
	}
	if s.goneRequired {
		out = append(out, fmt.Sprintf("watch from compacted RV %d (compacted at %d) was not answered with a 410 error", s.start, s.compactedAt))
	}
	if s.closed {
		out = append(out, "result channel closed without an error event before the watcher was stopped")
	}
	return out
}

// checkResumable: a watch resumed from RV r, one the original watcher saw,
// yields exactly the original's events after r (compared up to the last RV
// both saw), unless r was compacted and the resume got a 410.
func checkResumable(orig, resumed *stream, r uint64) []string {
	if resumed.endedGone() && resumed.compactedAt > r {
		return nil
	}
	var out []string
	for i, e := range resumed.dataEvents() {
		if e.RV <= r {
			out = append(out, fmt.Sprintf("resume from RV %d delivered event %d %v at or before it", r, i, e))
		}
	}
	upTo := min(orig.lastSeen(), resumed.lastSeen())
	pick := func(s *stream) []expectedEvent {
		var out []expectedEvent
		for _, e := range s.dataEvents() {
			if e.RV > r && e.RV <= upTo {
				out = append(out, e.expected())
			}
		}
		// Keys within one revision may come in any order.
		slices.SortStableFunc(out, func(a, b expectedEvent) int {
			if a.RV != b.RV {
				return cmp.Compare(a.RV, b.RV)
			}
			return cmp.Compare(a.Key, b.Key)
		})
		return out
	}
	a, b := pick(orig), pick(resumed)
	if slices.Equal(a, b) {
		return out
	}
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	at := func(s []expectedEvent) string {
		if i < len(s) {
			return s[i].String()
		}
		return "end of stream"
	}
	return append(out, fmt.Sprintf("resume from RV %d differs from the original suffix at position %d (up to RV %d): original %s, resumed %s",
		r, i, upTo, at(a), at(b)))
}
