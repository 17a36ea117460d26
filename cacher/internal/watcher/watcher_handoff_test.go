package watcher

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
	unlock := r.hub.Lock()
	r.receiveAll()
	for deadline := time.Now().Add(time.Second); !r.w.e.Offered(); {
		if time.Now().After(deadline) {
			unlock()
			t.Fatal("with the hub's lock held, the goroutine did not offer delivery back")
		}
		time.Sleep(time.Millisecond) // polling a state no channel announces
	}
	unlock()
	r.publish(1)
	_, direct, _ := r.hub.State(r.w.e)
	if !direct {
		t.Fatal("the event after the hand-back was not delivered directly")
	}
	r.receiveAll()
}
