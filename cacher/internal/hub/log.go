package hub

import (
	"sync/atomic"
	"weak"

	"k8s.io/apimachinery/pkg/runtime"

	"github.com/listwatch/listwatch/storage"
	"github.com/listwatch/listwatch/watchcache"
)

// The hub's log: every change dispatch hands to live watchers, and every
// bookmark, is published once, as an immutable entry, into one bounded
// log shared by all of them. A live watcher is a cursor into it: dispatch
// only tells the watchers an entry concerns (found through the registry's
// index) that there is something to read, once until they read it (see
// Entry.from); each reads everything it has not read in one go
// (Entry.Take), so that under load one wake-up carries many revisions.

// MinLogSize is the least number of entries the log holds.
const MinLogSize = 4096

// Published is one entry of the hub's log: a change of the cache (Event,
// shared with the cache's history) or a bookmark for some of the live
// watchers. Immutable once published, but for its lazily made wrapper.
type Published struct {
	Event *watchcache.Event
	seq   uint64
	// to is who a bookmark is for; a change concerns the watchers
	// interested in it (Spec.Interested).
	to   audience
	slot int    // toSlot: the bookmark round's step
	one  *Entry // toOne: the watcher
	// wrapper points weakly at the wrapper of the change's current object
	// shared by every encoded watcher it is delivered to (see Wrapper).
	wrapper atomic.Pointer[weak.Pointer[storage.EncodedObject]]
}

type audience uint8

const (
	toInterested audience = iota // a change: the watchers interested in it
	toProgress                   // a storage progress bookmark: the watchers that asked for them
	toSlot                       // a periodic bookmark: one step of the bookmark round
	toOne                        // a watcher's own bookmark (its deadline's)
)

// concerns reports whether p is for e.
func (p *Published) concerns(e *Entry) bool {
	switch p.to {
	case toInterested:
		return e.Interested(p.Event)
	case toProgress:
		return e.ProgressNotify && e.Bookmarks
	case toSlot:
		return e.Bookmarks && e.BookmarkSlot == p.slot
	default:
		return p.one == e
	}
}

// Wrapper returns the wrapper of the change's current object obj, shared
// by every encoded watcher the change is delivered to while any of them
// holds it, so that a change costs one wrapper, not one per watcher. The
// entry points at it only weakly: the log keeps no encodings alive (a
// watcher after it was collected gets a new one).
func (p *Published) Wrapper(obj runtime.Object) *storage.EncodedObject {
	for {
		old := p.wrapper.Load()
		if old != nil {
			if o := old.Value(); o != nil {
				return o
			}
		}
		o := &storage.EncodedObject{Object: obj, Encodings: p.Event.Encodings()}
		wp := weak.Make(o)
		if p.wrapper.CompareAndSwap(old, &wp) {
			return o
		}
	}
}

// eventLog is the bounded ring of published entries, numbered from 1. One
// writer (dispatch, Hub.mu held) publishes; any number of watchers read
// without a lock: an entry a reader finds numbered otherwise than it
// asked was overwritten, the reader fell behind the log.
type eventLog struct {
	buf  []atomic.Pointer[Published]
	mask uint64
	head atomic.Uint64 // the number of the next entry
}

func newLog(size int) *eventLog {
	n := MinLogSize
	for n < size {
		n *= 2
	}
	l := &eventLog{buf: make([]atomic.Pointer[Published], n), mask: uint64(n - 1)}
	l.head.Store(1)
	return l
}

// publish appends p and returns its number (Hub.mu held).
func (l *eventLog) publish(p *Published) uint64 {
	seq := l.head.Load()
	p.seq = seq
	l.buf[seq&l.mask].Store(p)
	l.head.Store(seq + 1)
	return seq
}

// at returns entry seq, or nil if the log no longer holds it (seq must be
// below head).
func (l *eventLog) at(seq uint64) *Published {
	p := l.buf[seq&l.mask].Load()
	if p == nil || p.seq != seq {
		return nil
	}
	return p
}
