package hub

import "github.com/listwatch/listwatch/watchcache"

// How delivery passes between a watcher's goroutine and the dispatcher
// without the goroutine taking the hub's lock. The dispatcher delivers
// straight to result (direct mode) while the client keeps up; when result
// is full it queues to input, and the goroutine delivers. Once the
// goroutine has delivered everything it took, it offers delivery back
// (offerDirect) and waits: the dispatcher, at the watcher's next event,
// takes the offer if nothing is queued (takeOffer). A goroutine woken by
// a token first reclaims delivery; if the dispatcher took the offer, the
// token is stale (or parkLoop's) and the goroutine leaves the delivery
// state alone. Taking hub.mu after every batch instead made each watcher
// that fell behind wait for the dispatcher's whole round.

// Values of Entry.handoff.
const (
	deliveredByGoroutine int32 = iota // the goroutine delivers; dispatch queues
	offeredToDispatch                 // the goroutine is idle: dispatch may go direct
	deliveredByDispatch               // direct mode: dispatch delivers
)

// setDirect turns direct mode on or off (Hub.mu held).
func (e *Entry) setDirect(on bool) {
	e.direct = on
	if on {
		e.handoff.Store(deliveredByDispatch)
	} else {
		e.handoff.Store(deliveredByGoroutine)
	}
}

// OfferDirect is called by the goroutine once it has delivered everything
// it took: from then on it must not touch the delivery state until
// Reclaim returns true.
func (e *Entry) OfferDirect() { e.handoff.Store(offeredToDispatch) }

// Offered reports whether the goroutine offered delivery to dispatch and
// dispatch has not taken the offer yet.
func (e *Entry) Offered() bool { return e.handoff.Load() == offeredToDispatch }

// Reclaim is called by the goroutine woken by a token on Ready: true if
// the goroutine delivers (its offer was not taken, or dispatch queued
// again after it was); false if dispatch delivers directly.
func (e *Entry) Reclaim() bool {
	return e.handoff.CompareAndSwap(offeredToDispatch, deliveredByGoroutine) ||
		e.handoff.Load() == deliveredByGoroutine
}

// takeOffer puts the watcher in direct mode if its goroutine offered
// delivery and nothing is queued (Hub.mu held, not in direct mode).
func (e *Entry) takeOffer() {
	if e.handoff.Load() == offeredToDispatch && e.input.empty() &&
		e.handoff.CompareAndSwap(offeredToDispatch, deliveredByDispatch) {
		e.direct = true
	}
}

// offer hands ev to the watcher without blocking (Hub.mu held): straight
// to the client in direct mode, else to its input queue; false means the
// queue is full.
func (e *Entry) offer(ev *watchcache.Event, shared *Wrappers) bool {
	if !e.direct {
		e.takeOffer()
	}
	if e.direct {
		if e.member.DeliverDirect(ev, shared) {
			return true
		}
		e.setDirect(false)
	}
	if !e.input.push(ev) {
		return false
	}
	e.wake()
	return true
}
