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
// held, to deliver, wake or end it.
type Member interface {
	// DeliverDirect delivers ev straight to the client in direct mode,
	// without blocking: true when ev is sent or concerns nothing; false,
	// with nothing changed, when the client's channel is full or the
	// event must end the watch (the watcher's goroutine then handles it).
	// An encoded watcher takes the wrapper of the change's object from
	// shared.
	DeliverDirect(ev *watchcache.Event, shared *Wrappers) bool
	// Resume starts a goroutine for a parked watcher, which resumes in live
	// dispatch.
	Resume()
	// Abort ends the watch with cause.
	Abort(cause error)
}

// Entry is one watch in the hub: its Spec and the dispatch state the hub
// owns. The hub is the only writer of every field but handoff (shared with
// the watcher's goroutine, see handoff.go), parkAsk and busy (atomics the
// goroutine and the park loop exchange); the watcher's goroutine reads
// what dispatch left for it through the methods below.
type Entry struct {
	Spec
	member Member

	// input is the queue of live events, filled without blocking by the
	// dispatcher while the watcher is registered; never closed.
	input *queue
	// lagged is signalled after the dispatcher removed the watcher because
	// input was full (or the cache was replaced); lagFrom is then the RV up
	// to which every concerning event has been queued.
	lagged  chan struct{}
	lagFrom uint64
	seq     uint64 // dispatch round, to visit the entry once per event
	slot    slot   // index position
	// direct lets the dispatcher deliver live events straight to the
	// client (Member.DeliverDirect), saving the goroutine hop per event
	// while the client keeps up. The dispatcher sets it when the goroutine
	// offered delivery back with nothing queued (see handoff.go) and
	// clears it when the client's channel is full (the event then goes to
	// input, which wakes the goroutine) and when the watcher leaves live
	// dispatch.
	direct bool
	// handoff is who delivers, as the goroutine and dispatch pass delivery
	// between them without the goroutine taking the hub's lock.
	handoff atomic.Int32
	// held are the live events dispatch holds for the watcher while the
	// feed batches (see registry.hold).
	held []*watchcache.Event
	// parked: the watcher has no goroutine (see park.go); parkTimer wakes
	// it for its deadline bookmark.
	parked    bool
	parkTimer clock.Timer
	// parkAsk is set by the park loop (with a token on input's ready
	// channel) to ask the goroutine to park if it can; busy is set by the
	// goroutine when it delivers a batch, and cleared by the park loop,
	// which leaves busy watchers be.
	parkAsk, busy atomic.Bool
}

// NewEntry returns the hub's entry of a watch with spec, served by m,
// whose live events queue holds up to bufferSize events.
func NewEntry(spec Spec, m Member, bufferSize int) *Entry {
	return &Entry{Spec: spec, member: m, input: newQueue(bufferSize), lagged: make(chan struct{}, 1)}
}

// Ready holds a token while live events may be queued for the goroutine
// (or the park loop asks it to park).
func (e *Entry) Ready() <-chan struct{} { return e.input.ready }

// Take moves every queued live event into dst (reset first) and returns it.
func (e *Entry) Take(dst []*watchcache.Event) []*watchcache.Event { return e.input.takeAll(dst) }

// DropToken consumes the ready token of what was just taken, if still there.
func (e *Entry) DropToken() {
	select {
	case <-e.input.ready:
	default:
	}
}

// Lagged is signalled when dispatch took the watcher out of live dispatch.
func (e *Entry) Lagged() <-chan struct{} { return e.lagged }

// LagFrom is the RV up to which dispatch queued every concerning event
// before the watcher lagged; read after Lagged was signalled.
func (e *Entry) LagFrom() uint64 { return e.lagFrom }

// MarkBusy records that the goroutine delivered a batch: the park loop
// leaves it be this round.
func (e *Entry) MarkBusy() { e.busy.Store(true) }

// ParkAsked reports whether the park loop asked the goroutine to park.
func (e *Entry) ParkAsked() bool { return e.parkAsk.Load() }
