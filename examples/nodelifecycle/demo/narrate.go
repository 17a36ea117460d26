package demo

import (
	"io"
	"sync"

	"github.com/listwatch/listwatch/examples/internal/demorun"
	"github.com/listwatch/listwatch/examples/nodelifecycle/controller"
	"github.com/listwatch/listwatch/examples/nodelifecycle/taint"
	"github.com/listwatch/listwatch/reflector/workqueue"
)

// recorder narrates and keeps what the controllers report.
type recorder struct {
	*demorun.Narrator
	mu        sync.Mutex
	events    []controller.Event
	evictions []taint.Eviction
}

func newRecorder(w io.Writer, clock workqueue.Clock) *recorder {
	return &recorder{Narrator: demorun.NewNarrator(w, clock)}
}

// onEvent records and narrates a controller event.
func (r *recorder) onEvent(e controller.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
	r.Event(e)
}

// onEvict records and narrates an eviction.
func (r *recorder) onEvict(e taint.Eviction) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.evictions = append(r.evictions, e)
	r.Eviction(e)
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
