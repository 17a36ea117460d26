package storagetest

import (
	"context"
	"math"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/storage"
)

// This file opens the guarantee checker to suites that drive their own
// traffic (the robustness suite): etcd's own history of a resource prefix,
// and the six-guarantee check of one recorded watch against it.

// SeqAnnotation is the annotation a write sets to a value unique to it, so
// that an event or a read can be matched to the write it reports.
const SeqAnnotation = seqAnnotation

// History is etcd's own history of a resource prefix, recorded by raw etcd
// watches with previous values: the ground truth reads and watches are
// judged against.
type History struct {
	h    *history
	done <-chan struct{}
}

// RecordHistory records every change under env's resource prefix from
// revision fromRev (the prefix must be empty before it) until ctx is done.
// A broken etcd watch (no leader, etcd down) is resumed from the revision
// after the last one recorded; compacting a revision not yet recorded
// fails the history (WaitFor reports it), so compact only below a revision
// WaitFor returned for.
func RecordHistory(ctx context.Context, env GuaranteeEnv, fromRev int64) *History {
	h, done := recordHistory(ctx, env.Client, env.etcdResourcePrefix(), fromRev, truthDecoder(env), true)
	return &History{h: h, done: done}
}

// WaitFor blocks until the history holds every change up to rev, the
// recording failed, or ctx is done.
func (h *History) WaitFor(ctx context.Context, rev uint64) error { return h.h.waitFor(ctx, rev) }

// Done is closed when the recording has stopped (its ctx is done).
func (h *History) Done() <-chan struct{} { return h.done }

// Change is one key's change at one revision.
type Change struct {
	// Rev is the revision of the change (the object's new resourceVersion).
	Rev uint64
	// Key is namespace/name.
	Key string
	// Deleted reports a delete; Seq, Labels and Fields are then the
	// deleted object's.
	Deleted bool
	// Seq is the object's SeqAnnotation.
	Seq string
	// Labels and Fields are the object's, for selectors.
	Labels labels.Set
	Fields fields.Set
}

// Changes returns every change recorded so far, in revision order.
func (h *History) Changes() []Change {
	var out []Change
	for _, r := range h.h.snapshot() {
		for _, te := range r.events {
			o := te.cur
			if te.deleted {
				o = te.prev
			}
			out = append(out, Change{Rev: te.rev, Key: o.key, Deleted: te.deleted, Seq: o.seq,
				Labels: o.labels, Fields: o.fields})
		}
	}
	return out
}

// WatchRecord is what one watch asked for and received.
type WatchRecord struct {
	// Start is the RV the watch started from.
	Start uint64
	// Label and Field are its selectors ("" for none).
	Label, Field string
	// Bookmarks reports whether it allowed bookmarks.
	Bookmarks bool
	// Events are the events received, in order; an error event ends them.
	Events []watch.Event
	// Closed reports that the store closed the result channel before the
	// client stopped the watch.
	Closed bool
	// CompactedAt is the revision etcd was compacted to when the watch
	// ended (0: never).
	CompactedAt uint64
	// Partial reports that the client stopped the watch when it chose to:
	// only the changes up to the last RV it was told about (by an event or
	// a bookmark) were due.
	Partial bool
}

// observed converts w's events for the checkers, without what it was due.
func observed(v storage.Versioner, w WatchRecord) *stream {
	s := &stream{start: w.Start, bookmarks: w.Bookmarks, closed: w.Closed, compactedAt: w.CompactedAt}
	s.events = make([]observedEvent, 0, len(w.Events))
	for _, ev := range w.Events {
		s.events = append(s.events, observe(ev, v))
	}
	return s
}

// stream converts w for the checkers, with the changes it was due: those
// after its start, up to the last RV it was told about if it is Partial.
// Only the revisions in that span are read, so judging many watches costs
// their spans, not the history's length each.
func (h *History) stream(v storage.Versioner, attrs storage.AttrFunc, w WatchRecord) (*stream, error) {
	spec := watchSpec{start: w.Start, label: w.Label, field: w.Field, bookmarks: w.Bookmarks}
	_, match, err := spec.predicate(attrs)
	if err != nil {
		return nil, err
	}
	s := observed(v, w)
	end := uint64(math.MaxUint64)
	if w.Partial {
		end = s.lastSeen()
	}
	s.expected = expectedStream(h.h.snapshot(), w.Start, end, match)
	return s, nil
}

// CheckWatch judges one watch by the six guarantees (ordered, unique,
// atomic, bookmarkable, reliable, and ended only by a legitimate 410)
// against the history, which must already hold every revision the watch
// was told about; it returns the violations, each prefixed by its check.
// attrs extracts labels and fields for the selectors (nil:
// storage.DefaultAttrs).
func (h *History) CheckWatch(v storage.Versioner, attrs storage.AttrFunc, w WatchRecord) []string {
	if attrs == nil {
		attrs = storage.DefaultAttrs
	}
	s, err := h.stream(v, attrs, w)
	if err != nil {
		return []string{"selector: " + err.Error()}
	}
	return checkStream(s)
}

// CheckResume judges a watch resumed from RV from, an RV the original watch
// was told about: it must yield exactly the original's events after from
// (up to the last RV both saw), unless from was compacted and it got a 410.
func (h *History) CheckResume(v storage.Versioner, attrs storage.AttrFunc, orig, resumed WatchRecord, from uint64) []string {
	if attrs == nil {
		attrs = storage.DefaultAttrs
	}
	// Resumability compares what the two watches received; neither's due
	// changes are needed. Their selectors must still parse.
	for _, w := range []WatchRecord{orig, resumed} {
		spec := watchSpec{label: w.Label, field: w.Field}
		if _, _, err := spec.predicate(attrs); err != nil {
			return []string{"selector: " + err.Error()}
		}
	}
	o, r := observed(v, orig), observed(v, resumed)
	var out []string
	for _, s := range checkResumable(o, r, from) {
		out = append(out, "checkResumable: "+s)
	}
	return out
}
