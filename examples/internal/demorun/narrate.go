package demorun

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// Narrator writes a demo's narration, each line stamped with the time
// since the start and the time of day.
type Narrator struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time
	// last is the stamp of the last line: lines are stamped when they are
	// written, never earlier than the line before.
	last time.Time
}

// NewNarrator returns a Narrator writing to w, starting now.
func NewNarrator(w io.Writer) *Narrator { return &Narrator{w: w, start: time.Now()} }

// Printf writes one line. Lines are stamped when they are written: the
// parts report from their own goroutines, and stamping each line with the
// time its event happened printed them out of order (a later line with an
// earlier time).
func (n *Narrator) Printf(format string, args ...any) {
	n.mu.Lock()
	defer n.mu.Unlock()
	at := time.Now()
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
