package watcher

import (
	"testing"
	"time"
)

// A watcher's goroutine that delivered what its client fell behind on hands
// delivery back to the hub without waiting for the hub's lock (held here
// as a long dispatch round would hold it), and exits; the hub then
// delivers the next event itself.
func TestWatcherHandsBackWithoutTheHubLock(t *testing.T) {
	r := newMachineRig(t)
	r.await("joined", true, true)
	r.publish(17) // 16 fill result, one waits for the goroutine
	unlock := r.hub.Lock()
	r.receiveAll()
	for deadline := time.Now().Add(time.Second); !r.w.e.Direct(); {
		if time.Now().After(deadline) {
			unlock()
			t.Fatal("with the hub's lock held, the goroutine did not hand delivery back")
		}
		time.Sleep(time.Millisecond) // polling a state no channel announces
	}
	unlock()
	r.publish(1)
	if _, direct := r.hub.State(r.w.e); !direct {
		t.Fatal("the event after the hand-back started a goroutine")
	}
	r.receiveAll()
}
