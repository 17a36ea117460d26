package hub

import "time"

// Who delivers a live watcher's entries. A watcher has a goroutine only
// while it has work the hub cannot do without blocking: its initial state
// and catch-up before it joins live dispatch, entries its client has no
// room for, its lag, the end of its context. Otherwise it has none, and
// the hub delivers for it, under its lock and without blocking: each entry
// straight to the client as it is published (DeliverDirect), or what a
// batch of the feed's published at its end (DrainDirect); the client is
// then woken by the feed's goroutine itself. When the hub cannot, it
// starts a goroutine (kick, Member.Resume), which takes everything the
// log holds for the watcher, delivers it, waiting for its client, and
// hands delivery back (Release) as its last act, unless the hub told it
// to look again meanwhile (pending): hand-back takes no lock, so that a
// goroutine is never held up by a long dispatch round.

// Values of Entry.handoff. Only the hub (Hub.mu held) leaves byHub and
// enters pending; only the goroutine leaves pending and enters byHub.
const (
	byGoroutine int32 = iota // a goroutine delivers (a new watch's, until it joins)
	pending                  // a goroutine delivers, and must look again before it hands back
	byHub                    // no goroutine: the hub delivers
)

// Direct reports whether the hub delivers for e: it has no goroutine.
func (e *Entry) Direct() bool { return e.handoff.Load() == byHub }

// kick makes sure a goroutine looks at e (Hub.mu held): one is started if
// e has none, else the running one looks again before it hands back.
func (e *Entry) kick() {
	for {
		switch e.handoff.Load() {
		case byHub:
			e.handoff.Store(byGoroutine)
			e.member.Resume()
			return
		case byGoroutine:
			if e.handoff.CompareAndSwap(byGoroutine, pending) {
				return
			}
		default:
			return
		}
	}
}

// Release is called by the goroutine when it has delivered everything it
// took: true when delivery is the hub's now (the goroutine must exit
// without touching the watcher again); false when the hub told it to look
// again meanwhile.
func (e *Entry) Release() bool {
	if e.handoff.CompareAndSwap(byGoroutine, byHub) {
		return true
	}
	e.handoff.Store(byGoroutine) // from pending, which only the goroutine leaves
	return false
}

// Wake makes sure a goroutine looks at e, from a context callback: the
// watch's context ended.
func (h *Hub) Wake(e *Entry) {
	h.mu.Lock()
	e.kick()
	h.mu.Unlock()
}

// armDeadline arms the timer of e's deadline bookmark while it is in live
// dispatch (Hub.mu held): when it fires, the bookmark is published for e.
func (h *Hub) armDeadline(e *Entry) {
	at, ok := e.DeadlineBookmark()
	if !ok {
		return
	}
	// The callback publishes from a goroutine of its own: a fake clock runs
	// callbacks holding its lock, which Join and remove (stopping the
	// timer) take while holding mu.
	e.deadlineTimer = h.wall.AfterFunc(at.Sub(h.wall.Now()), func() { go h.QueueBookmark(e) })
}

// DeadlineBookmark is when the bookmark that precedes the watch's deadline
// is due, if it is still to be sent.
func (e *Entry) DeadlineBookmark() (time.Time, bool) {
	ns := e.deadline.Load()
	if ns == 0 {
		return time.Time{}, false
	}
	return time.Unix(0, ns), true
}

// SetDeadlineBookmark sets when the bookmark that precedes the watch's
// deadline is due; before the watch starts.
func (e *Entry) SetDeadlineBookmark(at time.Time) {
	if !at.IsZero() {
		e.deadline.Store(at.UnixNano())
	}
}

// ClaimDeadlineBookmark reports whether the caller is the one to send the
// deadline bookmark (the hub while the watcher is live, its goroutine
// while it catches up): true once.
func (e *Entry) ClaimDeadlineBookmark() bool {
	ns := e.deadline.Load()
	return ns != 0 && e.deadline.CompareAndSwap(ns, 0)
}
