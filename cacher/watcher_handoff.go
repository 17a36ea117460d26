package cacher

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

// Values of watcher.handoff.
const (
	deliveredByGoroutine int32 = iota // the goroutine delivers; dispatch queues
	offeredToDispatch                 // the goroutine is idle: dispatch may go direct
	deliveredByDispatch               // direct mode: dispatch delivers
)

// setDirect turns direct mode on or off (hub.mu held).
func (w *watcher) setDirect(on bool) {
	w.direct = on
	if on {
		w.handoff.Store(deliveredByDispatch)
	} else {
		w.handoff.Store(deliveredByGoroutine)
	}
}

// offerDirect is called by the goroutine once it has delivered everything
// it took: from then on it must not touch the delivery state until
// reclaim returns true.
func (w *watcher) offerDirect() { w.handoff.Store(offeredToDispatch) }

// reclaim is called by the goroutine woken by a token on input.ready: true
// if the goroutine delivers (its offer was not taken, or dispatch queued
// again after it was); false if dispatch delivers directly.
func (w *watcher) reclaim() bool {
	return w.handoff.CompareAndSwap(offeredToDispatch, deliveredByGoroutine) ||
		w.handoff.Load() == deliveredByGoroutine
}

// takeOffer puts the watcher in direct mode if its goroutine offered
// delivery and nothing is queued (hub.mu held, not in direct mode).
func (w *watcher) takeOffer() {
	if w.handoff.Load() == offeredToDispatch && w.input.empty() &&
		w.handoff.CompareAndSwap(offeredToDispatch, deliveredByDispatch) {
		w.direct = true
	}
}
