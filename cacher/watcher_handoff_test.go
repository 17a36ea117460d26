package cacher

import (
	"testing"
	"time"
)

// A watcher's goroutine that delivered what its client fell behind on hands
// delivery back to dispatch without waiting for the hub's lock (held here
// as a long dispatch round would hold it), and dispatch delivers the next
// event directly.
func TestWatcherHandsBackWithoutTheHubLock(t *testing.T) {
	r := newMachineRig(t)
	r.await("joined", true, false, nil)
	r.publish(17) // 16 fill result, one is queued: the goroutine delivers it
	r.hub.mu.Lock()
	r.receiveAll()
	for deadline := time.Now().Add(time.Second); r.w.handoff.Load() != offeredToDispatch; {
		if time.Now().After(deadline) {
			r.hub.mu.Unlock()
			t.Fatalf("handoff is %d with the hub's lock held, want %d (offered)", r.w.handoff.Load(), offeredToDispatch)
		}
		time.Sleep(time.Millisecond) // polling a state no channel announces
	}
	r.hub.mu.Unlock()
	r.publish(1)
	r.hub.mu.Lock()
	direct := r.w.direct
	r.hub.mu.Unlock()
	if !direct {
		t.Fatal("the event after the hand-back was not delivered directly")
	}
	r.receiveAll()
}
