package storagetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/listwatch/listwatch/storage"
)

// watchSpec is what one watcher asks for.
type watchSpec struct {
	id        string
	start     uint64
	label     string // label selector, "" for none
	field     string // field selector, "" for none
	bookmarks bool
	progress  bool
	// goneRequired: the start RV was compacted before the watch started, so
	// the watch must end with a 410 (unless serving compacted RVs is allowed).
	goneRequired bool
}

func (s watchSpec) String() string {
	return fmt.Sprintf("watcher %s from RV %d labels=%q fields=%q bookmarks=%v progressNotify=%v",
		s.id, s.start, s.label, s.field, s.bookmarks, s.progress)
}

// guaranteeSelectors are the selectors watchers pick from; "" selects all.
var guaranteeSelectors = []struct{ label, field string }{
	{"", ""}, {"", ""}, {"", ""}, {"", ""},
	{"grp=g1", ""},
	{"grp in (g0,g2)", ""},
	{"grp!=g3", ""},
	{"", "metadata.name=obj-1"},
	{"", "metadata.namespace=ns-b"},
	{"grp=g2", "metadata.namespace=ns-a"},
}

// randomSpec returns a watcher of random selectors and options from start.
func randomSpec(rng *rand.Rand, id string, start uint64) watchSpec {
	sel := guaranteeSelectors[rng.IntN(len(guaranteeSelectors))]
	return watchSpec{id: id, start: start, label: sel.label, field: sel.field,
		bookmarks: rng.IntN(2) == 0, progress: rng.IntN(2) == 0}
}

// predicate builds the storage predicate and the matcher used on the ground truth.
func (s watchSpec) predicate(attrs storage.AttrFunc) (storage.SelectionPredicate, matcher, error) {
	l, err := labels.Parse(s.label)
	if err != nil {
		return storage.SelectionPredicate{}, nil, err
	}
	f, err := fields.ParseSelector(s.field)
	if err != nil {
		return storage.SelectionPredicate{}, nil, err
	}
	p := storage.SelectionPredicate{Label: l, Field: f, GetAttrs: attrs, AllowWatchBookmarks: s.bookmarks}
	return p, p.MatchesObjectAttributes, nil
}

// watchRun is one running watcher and what it received.
type watchRun struct {
	spec  watchSpec
	match matcher
	w     watch.Interface
	// compactRev is the run's compaction revision, read when an error
	// event arrives (0: no compaction had started).
	compactRev *atomic.Uint64

	mu          sync.Mutex
	events      []observedEvent
	last        uint64 // highest RV seen (events and bookmarks)
	ended       bool   // an error event arrived
	closed      bool   // the result channel closed before Stop
	compactedAt uint64 // compaction revision known when the stream ended
	changed     chan struct{}

	stopped atomic.Bool
	done    chan struct{} // closed when the consumer has drained the channel
}

// startWatch opens the watch described by spec and starts consuming it.
func startWatch(ctx context.Context, env GuaranteeEnv, spec watchSpec, compactRev *atomic.Uint64) (*watchRun, error) {
	pred, match, err := spec.predicate(env.attrs())
	if err != nil {
		return nil, err
	}
	r := &watchRun{spec: spec, match: match, compactRev: compactRev, last: spec.start,
		changed: make(chan struct{}), done: make(chan struct{})}
	w, err := env.Store.Watch(ctx, strings.TrimSuffix(env.ResourcePrefix, "/")+"/", storage.ListOptions{
		ResourceVersion: storage.RVAt(spec.start),
		Predicate:       pred,
		Recursive:       true,
		ProgressNotify:  spec.progress,
	})
	if err != nil {
		if !errors.Is(err, storage.ErrGone) {
			return nil, fmt.Errorf("%v: Watch: %w", spec, err)
		}
		// A 410 returned by Watch counts as a 410 error event.
		r.events = []observedEvent{{Type: watch.Error, Code: http.StatusGone, Msg: err.Error()}}
		r.ended = true
		r.compactedAt = compactRev.Load()
		close(r.done)
		return r, nil
	}
	r.w = w
	go r.consume(env.Store.Versioner())
	return r, nil
}

func (r *watchRun) consume(v storage.Versioner) {
	defer close(r.done)
	for ev := range r.w.ResultChan() {
		o := observe(ev, v)
		r.mu.Lock()
		r.events = append(r.events, o)
		if o.Type == watch.Error {
			r.ended = true
			r.compactedAt = r.compactRev.Load()
		} else if !r.ended {
			r.last = max(r.last, o.RV)
		}
		close(r.changed)
		r.changed = make(chan struct{})
		r.mu.Unlock()
	}
	r.mu.Lock()
	r.closed = !r.stopped.Load()
	if !r.ended {
		r.compactedAt = r.compactRev.Load()
	}
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
}

// observe reduces a watch event to what the checkers compare.
func observe(ev watch.Event, v storage.Versioner) observedEvent {
	o := observedEvent{Type: ev.Type}
	switch ev.Type {
	case watch.Error:
		if st, ok := ev.Object.(*metav1.Status); ok {
			o.Code, o.Msg = st.Code, st.Message
		} else {
			o.Msg = fmt.Sprintf("%T", ev.Object)
		}
		return o
	case watch.Bookmark:
		rv, err := v.ObjectResourceVersion(ev.Object)
		if err != nil {
			o.Msg = err.Error()
		}
		o.RV = rv
		return o
	}
	rv, err := v.ObjectResourceVersion(ev.Object)
	if err != nil {
		o.Msg = err.Error()
	}
	o.RV = rv
	if acc, err := meta.Accessor(ev.Object); err == nil {
		o.Key = acc.GetNamespace() + "/" + acc.GetName()
		o.Seq = acc.GetAnnotations()[seqAnnotation]
	}
	return o
}

// waitUntil blocks until the watcher has seen RV target (atTarget data
// events at it, or a later RV), ended or closed, or ctx is done; it reports
// whether the watcher finished. A store hands a revision's events over one
// by one, so the first one at target does not mean the rest arrived: once
// it came, the others get revisionGrace (a store that lost one is then
// caught by the checkers, not by a long wait).
func (r *watchRun) waitUntil(ctx context.Context, target uint64, atTarget int) bool {
	var grace <-chan time.Time
	for {
		r.mu.Lock()
		ok := r.last > target || (r.last == target && r.countAt(target) >= atTarget) || r.ended || r.closed
		reached := r.last == target
		ch := r.changed
		r.mu.Unlock()
		if ok {
			return true
		}
		if reached && grace == nil {
			t := time.NewTimer(revisionGrace)
			defer t.Stop()
			grace = t.C
		}
		select {
		case <-ch:
		case <-grace:
			return true
		case <-ctx.Done():
			return false
		case <-r.done:
		}
	}
}

// revisionGrace is how long waitUntil waits for the rest of a revision's
// events once the first arrived.
const revisionGrace = 2 * time.Second

// countAt counts the data events received at rv (r.mu held).
func (r *watchRun) countAt(rv uint64) int {
	n := 0
	for i := len(r.events) - 1; i >= 0; i-- {
		e := r.events[i]
		if e.Type == watch.Bookmark || e.Type == watch.Error {
			continue
		}
		if e.RV < rv {
			break
		}
		if e.RV == rv {
			n++
		}
	}
	return n
}

// stop stops the watch and waits until its channel is drained and closed.
func (r *watchRun) stop(ctx context.Context) error {
	if !r.stopped.Swap(true) && r.w != nil {
		r.w.Stop()
	}
	select {
	case <-r.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("%v: result channel not closed after Stop", r.spec)
	}
}

// stream returns what the watcher received, for the checkers.
func (r *watchRun) stream(expected []expectedEvent) *stream {
	r.mu.Lock()
	defer r.mu.Unlock()
	return &stream{start: r.spec.start, bookmarks: r.spec.bookmarks, expected: expected,
		events: append([]observedEvent(nil), r.events...), closed: r.closed, compactedAt: r.compactedAt}
}
