package hub

import (
	"strings"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/clock"

	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/watchcache"
)

// Spec is what a watch selects: its key scope, its predicate and the
// bookmarks it wants. It is fixed when the watch is created; the hub
// indexes the watch by it and the watcher converts events with it.
type Spec struct {
	Key       string
	Recursive bool
	// Prefix is Key + "/" for recursive watches (see RecursivePrefix).
	Prefix    string
	Pred      storage.SelectionPredicate
	EmptyPred bool
	// Bookmarks: the client allows bookmarks.
	Bookmarks bool
	// ProgressNotify: the client asked for storage progress notifications.
	ProgressNotify bool
	// BookmarkSlot is the step of the bookmark round at which the watch
	// gets its periodic bookmark (see BookmarkLoop), in [0, BookmarkSlots).
	BookmarkSlot int
}

// RecursivePrefix is the key prefix of a recursive list or watch on key:
// with a trailing "/", so that "/a" does not match "/ab".
func RecursivePrefix(key string) string {
	if strings.HasSuffix(key, "/") {
		return key
	}
	return key + "/"
}

// InScope reports whether key is in the watch's key scope.
func (s *Spec) InScope(key string) bool {
	if s.Recursive {
		return strings.HasPrefix(key, s.Prefix)
	}
	return key == s.Key
}

// Matches reports whether el matches the watch's predicate.
func (s *Spec) Matches(el *watchcache.Element) bool {
	return s.EmptyPred || el.Matches(&s.Pred)
}

// Interested reports whether ev is in the watch's key scope and matches
// its predicate before or after the change.
func (s *Spec) Interested(ev *watchcache.Event) bool {
	if !s.InScope(ev.Key()) {
		return false
	}
	if s.EmptyPred {
		return true
	}
	return (ev.Type != watch.Deleted && s.Matches(ev.Cur)) || (ev.Prev != nil && s.Matches(ev.Prev))
}

// Member is the hub's view of a watcher: what it calls, with its lock
// held, to deliver to, wake or end it.
type Member interface {
	// DeliverDirect delivers p, which concerns the watcher, for the hub (see
	// handoff.go) without blocking, when the watcher has taken everything
	// before it: true when p is sent or needs no sending; false, with
	// nothing changed, when the watcher needs its goroutine (its client's
	// channel is full, the watch ended, p must end it).
	DeliverDirect(p *Published) bool
	// DrainDirect delivers, for the hub (see handoff.go), what the watcher
	// has to take from the log (Entry.Take) without blocking: true when all
	// of it went out; false when the watcher needs its goroutine (its
	// client's channel is full, the watch ended, an event must end it, it
	// fell behind the log), with what it did not deliver given back
	// (Entry.Untake).
	DrainDirect() bool
	// Resume starts a goroutine for a watcher that has none, which takes
	// what the log holds for it (see handoff.go).
	Resume()
	// Abort ends the watch with cause.
	Abort(cause error)
}

// Entry is one watch in the hub: its Spec, its cursor into the hub's log
// and the dispatch state the hub owns. The hub is the only writer of every
// field but cursor (the deliverer's, see Take), from and behind (atomics
// dispatch and the deliverer exchange), handoff (shared with the
// watcher's goroutine, see handoff.go) and deadline.
type Entry struct {
	Spec
	member Member
	// lagged is signalled after dispatch removed the watcher from live
	// dispatch (it fell max events behind, or the cache was replaced);
	// lagFrom is then the RV up to which every concerning event is in the
	// log before stop.
	lagged  chan struct{}
	lagFrom uint64
	seq     uint64 // dispatch round, to visit the entry once per event
	slot    slot   // index position

	// log is the hub's log, set when the watcher joins live dispatch.
	log *eventLog
	// cursor is the number of the next log entry the watcher reads: owned
	// by whoever delivers (see handoff), set by the hub when the watcher
	// joins.
	cursor uint64
	// from is 0 when the watcher has taken every entry that concerns it,
	// else the number of the oldest it has not: dispatch sets it (from 0)
	// and tells the watcher, Take swaps it back to 0. While it is set,
	// dispatch does not tell the watcher again.
	from atomic.Uint64
	// stop is 0 while the watcher is in live dispatch, else the number of
	// the first entry published after it left: Take reads none from it on.
	stop atomic.Uint64
	// behind counts the changes in the log that concern the watcher and
	// wait for its goroutine (not those the hub delivers); past max it
	// leaves live dispatch (lags).
	behind atomic.Int64
	max    int64
	// waking: dispatch deferred waking the watcher to the end of the feed's
	// batch (registry.waking).
	waking bool
	// handoff is who delivers, the hub or a goroutine (see handoff.go).
	handoff atomic.Int32
	// deadline is when the bookmark that precedes the watch's deadline is
	// due (Unix ns; 0: none, or sent); deadlineTimer publishes it while the
	// watcher is in live dispatch.
	deadline      atomic.Int64
	deadlineTimer clock.Timer
}

// NewEntry returns the hub's entry of a watch with spec, served by m,
// which leaves live dispatch when more than bufferSize changes that
// concern it wait in the log. Its goroutine, which m starts, delivers
// until it joins live dispatch.
func NewEntry(spec Spec, m Member, bufferSize int) *Entry {
	return &Entry{Spec: spec, member: m, lagged: make(chan struct{}, 1), max: int64(max(bufferSize, 1))}
}

// Take moves into dst (reset first) the log entries that concern the
// watcher and that it has not taken, oldest first, up to where it left
// live dispatch if it did. lost reports that the log no longer held one
// of them (the watcher fell behind the log): dst then holds those before
// it, and the watcher leaves live dispatch (Hub.Lag) and catches up from
// the cache's history. Called by whoever delivers (see cursor).
func (e *Entry) Take(dst []*Published) (_ []*Published, lost bool) {
	dst = dst[:0]
	from := e.from.Swap(0)
	if from == 0 {
		return dst, false
	}
	end := e.log.head.Load()
	if s := e.stop.Load(); s != 0 && s < end {
		end = s
	}
	var changes int64
	seq := max(e.cursor, from)
	for ; seq < end; seq++ {
		p := e.log.at(seq)
		if p == nil {
			lost = true
			break
		}
		if !p.concerns(e) {
			continue
		}
		dst = append(dst, p)
		if p.to == toInterested {
			changes++
		}
	}
	e.cursor = seq
	e.behind.Add(-changes)
	return dst, lost
}

// Untake gives back rest, the end of what Take returned, which the hub's
// delivery could not deliver (Hub.mu held): the next Take starts with it
// (or where the last Take found the log lost).
func (e *Entry) Untake(rest []*Published) {
	var changes int64
	if len(rest) > 0 {
		e.cursor = rest[0].seq
		for _, p := range rest {
			if p.to == toInterested {
				changes++
			}
		}
	}
	e.behind.Store(changes) // what waits for the goroutine now
	e.from.Store(e.cursor)
}

// Lagged is signalled when dispatch took the watcher out of live dispatch.
func (e *Entry) Lagged() <-chan struct{} { return e.lagged }

// LagFrom is the RV up to which every concerning event is in the log
// before the watcher lagged; read after Lagged was signalled.
func (e *Entry) LagFrom() uint64 { return e.lagFrom }
