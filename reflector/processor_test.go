package reflector

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/listwatch/listwatch/examples/widget"
)

func TestRingGrowsAndKeepsOrder(t *testing.T) {
	var r ring[int]
	next := 0
	for round := 0; round < 3; round++ {
		for i := 0; i < 1000; i++ {
			r.push(round*1000 + i)
			if i%3 == 0 { // interleave pops so the ring wraps around
				v, ok := r.pop()
				if !ok || v != next {
					t.Fatalf("pop = %d,%v want %d", v, ok, next)
				}
				next++
			}
		}
	}
	for r.len() > 0 {
		v, _ := r.pop()
		if v != next {
			t.Fatalf("pop = %d want %d", v, next)
		}
		next++
	}
	if next != 3000 {
		t.Fatalf("popped %d items", next)
	}
	if _, ok := r.pop(); ok {
		t.Fatal("pop from an empty ring")
	}
}

// countingHandler counts calls and optionally blocks each one on gate.
type countingHandler struct {
	gate                  chan struct{}
	adds, updates, delete atomic.Int64
	mu                    sync.Mutex
	seen                  []string
}

func (h *countingHandler) record(s string) {
	h.mu.Lock()
	h.seen = append(h.seen, s)
	h.mu.Unlock()
}

func (h *countingHandler) events() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.seen...)
}

func (h *countingHandler) OnAdd(w *widget.Widget, initial bool) {
	if h.gate != nil {
		<-h.gate
	}
	h.record(fmt.Sprintf("add %s/%s@%s initial=%v", w.Namespace, w.Name, w.ResourceVersion, initial))
	h.adds.Add(1)
}

func (h *countingHandler) OnUpdate(o, n *widget.Widget) {
	if h.gate != nil {
		<-h.gate
	}
	h.record(fmt.Sprintf("update %s/%s@%s->%s", n.Namespace, n.Name, o.ResourceVersion, n.ResourceVersion))
	h.updates.Add(1)
}

func (h *countingHandler) OnDelete(w *widget.Widget, unknown bool) {
	if h.gate != nil {
		<-h.gate
	}
	h.record(fmt.Sprintf("delete %s/%s@%s unknown=%v", w.Namespace, w.Name, w.ResourceVersion, unknown))
	h.delete.Add(1)
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func TestProcessorSlowListenerDoesNotBlockOthers(t *testing.T) {
	p := newProcessor[*widget.Widget]()
	slow := &countingHandler{gate: make(chan struct{})}
	fast := &countingHandler{}
	ls := newListener[*widget.Widget](slow, 0, nil)
	lf := newListener[*widget.Widget](fast, 0, nil)
	p.addListener(ls)
	p.addListener(lf)
	p.start()
	defer p.stop()

	const n = 2000
	for i := 0; i < n; i++ {
		p.distribute(notification[*widget.Widget]{kind: addNotification, newObj: testWidget("ns", fmt.Sprint(i), "1", nil)}, false)
	}
	// distribute returned although the slow handler has handled nothing.
	eventually(t, "fast handler", func() bool { return fast.adds.Load() == n })
	if got := slow.adds.Load(); got != 0 {
		t.Fatalf("slow handler ran %d times while blocked", got)
	}
	if got := ls.pending.Load(); got != n {
		t.Fatalf("slow pending = %d, want %d", got, n)
	}
	eventually(t, "fast pending drained", func() bool { return lf.pending.Load() == 0 })
	close(slow.gate)
	eventually(t, "slow handler", func() bool { return slow.adds.Load() == n })
	eventually(t, "slow pending drained", func() bool { return ls.pending.Load() == 0 })
	// Order is preserved through the buffer.
	ev := slow.events()
	for i := 0; i < n; i++ {
		if want := fmt.Sprintf("add ns/%d@1 initial=false", i); ev[i] != want {
			t.Fatalf("event %d = %q, want %q", i, ev[i], want)
		}
	}
}

func TestListenerRecoversFromPanic(t *testing.T) {
	p := newProcessor[*widget.Widget]()
	var panics atomic.Int64
	var got atomic.Int64
	h := ResourceEventHandlerFuncs[*widget.Widget]{AddFunc: func(w *widget.Widget, _ bool) {
		if w.Name == "boom" {
			panic("handler bug")
		}
		got.Add(1)
	}}
	l := newListener[*widget.Widget](h, 0, func(r any) {
		if r == "handler bug" {
			panics.Add(1)
		}
	})
	p.addListener(l)
	p.start()
	defer p.stop()
	for _, name := range []string{"a", "boom", "b"} {
		p.distribute(notification[*widget.Widget]{kind: addNotification, newObj: testWidget("ns", name, "1", nil)}, false)
	}
	eventually(t, "both good events", func() bool { return got.Load() == 2 })
	if panics.Load() != 1 {
		t.Fatalf("panic reported %d times", panics.Load())
	}
}

func TestProcessorResyncOnlyDueListeners(t *testing.T) {
	p := newProcessor[*widget.Widget]()
	due := &countingHandler{}
	never := &countingHandler{}
	ld := newListener[*widget.Widget](due, time.Millisecond, nil)
	ln := newListener[*widget.Widget](never, 0, nil)
	p.addListener(ld)
	p.addListener(ln)
	p.start()
	defer p.stop()
	time.Sleep(2 * time.Millisecond) // let the 1ms period elapse (a duration, not a synchronisation)
	if !p.shouldResync() {
		t.Fatal("no listener due")
	}
	w := testWidget("ns", "a", "1", nil)
	p.distribute(notification[*widget.Widget]{kind: updateNotification, oldObj: w, newObj: w}, true)
	p.distribute(notification[*widget.Widget]{kind: deleteNotification, newObj: w}, false)
	eventually(t, "deliveries", func() bool { return due.delete.Load() == 1 && never.delete.Load() == 1 })
	if due.updates.Load() != 1 || never.updates.Load() != 0 {
		t.Fatalf("sync delivered to due=%d never=%d, want 1 and 0", due.updates.Load(), never.updates.Load())
	}
}
