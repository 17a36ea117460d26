package demo

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/listwatch/listwatch/examples/nodelifecycle/controller"
	"github.com/listwatch/listwatch/examples/nodelifecycle/taint"
)

// recorder narrates and keeps what the controllers report.
type recorder struct {
	mu        sync.Mutex
	w         io.Writer
	start     time.Time
	events    []controller.Event
	evictions []taint.Eviction
	// last is the stamp of the last line: lines are stamped when they are
	// written, never earlier than the line before.
	last time.Time
}

func newRecorder(w io.Writer) *recorder { return &recorder{w: w, start: time.Now()} }

// printf writes one narrated line stamped with the time since the start.
func (r *recorder) printf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.printfLocked(format, args...)
}

// printfLocked writes one line stamped with the time it is written: the
// controllers report events from their own goroutines, and stamping each
// with the time it happened printed them out of order (a later line with
// an earlier time).
func (r *recorder) printfLocked(format string, args ...any) {
	at := time.Now()
	if at.Before(r.last) {
		at = r.last
	}
	r.last = at
	fmt.Fprintf(r.w, "[%6.2fs %s] %s\n", at.Sub(r.start).Seconds(), at.Format("15:04:05.000"), fmt.Sprintf(format, args...))
}

// onEvent records and narrates a controller event.
func (r *recorder) onEvent(e controller.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
	r.printfLocked("controller: %s", e)
}

// onEvict records and narrates an eviction.
func (r *recorder) onEvict(e taint.Eviction) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.evictions = append(r.evictions, e)
	why := "does not tolerate the NoExecute taint"
	if e.Waited > 0 {
		why = fmt.Sprintf("tolerated it for %s", e.Waited)
	}
	r.printfLocked("taint manager: evicted pod %s/%s from %s (%s)", e.Namespace, e.Pod, e.Node, why)
}

// eventsSince returns the events of kind recorded from index from on.
func (r *recorder) eventsSince(from int, kind controller.EventKind) []controller.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []controller.Event
	for _, e := range r.events[min(from, len(r.events)):] {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

// marks returns how many events and evictions are recorded so far.
func (r *recorder) marks() (events, evictions int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.events), len(r.evictions)
}

// evictionsSince returns the evictions recorded from index from on.
func (r *recorder) evictionsSince(from int) []taint.Eviction {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]taint.Eviction(nil), r.evictions[min(from, len(r.evictions)):]...)
}
