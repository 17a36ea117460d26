package hub

// Who delivers a live watcher's entries, as its goroutine and the hub pass
// delivery between them without the goroutine taking the hub's lock. While
// the client keeps up the hub delivers, under its lock and without
// blocking: each entry straight to the client as it is published
// (DeliverDirect), or what a batch of the feed's published at its end
// (DrainDirect); the client is then woken by the feed's goroutine itself,
// with no goroutine of the watcher's in between. When the client's channel
// is full the hub hands delivery to the watcher's goroutine (starting one
// for a parked watcher), which takes everything the log holds for it at
// each wake-up; once it has delivered all of it, it offers delivery back
// (OfferDirect) and waits: the hub, at the watcher's next entry, takes the
// offer (byHub) if nothing is left to take. A goroutine woken by a token
// first reclaims delivery (Reclaim); if the hub took the offer, the token
// is stale (or the park loop's) and the goroutine leaves the delivery
// state alone.

// Values of Entry.handoff.
const (
	deliveredByGoroutine int32 = iota // the goroutine delivers; the hub wakes it
	offeredToHub                      // the goroutine is idle: the hub may deliver
	deliveredByHub                    // the hub delivers (always, while parked)
)

// setDelivery makes the hub (byHub) or the goroutine the deliverer (Hub.mu
// held).
func (e *Entry) setDelivery(byHub bool) {
	if byHub {
		e.handoff.Store(deliveredByHub)
	} else {
		e.handoff.Store(deliveredByGoroutine)
	}
}

// OfferDirect is called by the goroutine once it has delivered everything
// it took: from then on it must not touch the delivery state until
// Reclaim returns true.
func (e *Entry) OfferDirect() { e.handoff.Store(offeredToHub) }

// Offered reports whether the goroutine offered delivery to the hub and
// the hub has not taken the offer yet.
func (e *Entry) Offered() bool { return e.handoff.Load() == offeredToHub }

// Reclaim is called by the goroutine woken by a token on Ready: true if
// the goroutine delivers (its offer was not taken, or the hub handed
// delivery back since); false if the hub delivers.
func (e *Entry) Reclaim() bool {
	return e.handoff.CompareAndSwap(offeredToHub, deliveredByGoroutine) ||
		e.handoff.Load() == deliveredByGoroutine
}

// byHub reports whether the hub delivers for e, taking the goroutine's
// offer if there is one (Hub.mu held, nothing left for e to take).
func (e *Entry) byHub() bool {
	switch e.handoff.Load() {
	case deliveredByHub:
		return true
	case offeredToHub:
		if e.handoff.CompareAndSwap(offeredToHub, deliveredByHub) {
			e.behind.Store(0) // it took everything
			return true
		}
	}
	return false
}
