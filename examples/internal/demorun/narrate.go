package demorun

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/listwatch/listwatch/examples/nodelifecycle/controller"
	"github.com/listwatch/listwatch/examples/nodelifecycle/taint"
	"github.com/listwatch/listwatch/reflector/workqueue"
)

// Narrator writes a demo's narration, each line stamped with the time
// since the start and the time of day.
type Narrator struct {
	mu    sync.Mutex
	w     io.Writer
	clock workqueue.Clock
	start time.Time
	// last is the stamp of the last line: lines are stamped when they are
	// written, never earlier than the line before.
	last time.Time
}

// NewNarrator returns a Narrator writing to w, starting now on clock (nil
// is the wall clock): the demo's parts' clock, so that its stamps and the
// times the parts report agree.
func NewNarrator(w io.Writer, clock workqueue.Clock) *Narrator {
	if clock == nil {
		clock = workqueue.RealClock{}
	}
	return &Narrator{w: w, clock: clock, start: clock.Now()}
}

// Printf writes one line. Lines are stamped when they are written: the
// parts report from their own goroutines, and stamping each line with the
// time its event happened printed them out of order (a later line with an
// earlier time).
func (n *Narrator) Printf(format string, args ...any) {
	n.mu.Lock()
	defer n.mu.Unlock()
	at := n.clock.Now()
	if at.Before(n.last) {
		at = n.last
	}
	n.last = at
	fmt.Fprintf(n.w, "[%6.2fs %s] %s\n", at.Sub(n.start).Seconds(), at.Format("15:04:05.000"), fmt.Sprintf(format, args...))
}

// Chain returns a callback that calls a, then b when set.
func Chain[T any](a, b func(T)) func(T) {
	return func(e T) {
		a(e)
		if b != nil {
			b(e)
		}
	}
}

// Event narrates a report of the node lifecycle controller.
func (n *Narrator) Event(e controller.Event) {
	n.Printf("node lifecycle controller: %s", e)
}

// Eviction narrates an eviction by the taint manager, and why.
func (n *Narrator) Eviction(e taint.Eviction) {
	why := "does not tolerate the NoExecute taint"
	if e.Waited > 0 {
		why = fmt.Sprintf("tolerated it for %s", e.Waited)
	}
	n.Printf("taint manager: evicted pod %s/%s from %s (%s)", e.Namespace, e.Pod, e.Node, why)
}

// NarrateReports has n narrate the node lifecycle controller's and the
// taint manager's reports to o, besides the callbacks o already has.
func (o *ClusterOptions) NarrateReports(n *Narrator) {
	o.OnEvent, o.OnEvict = Chain(n.Event, o.OnEvent), Chain(n.Eviction, o.OnEvict)
}
