package demo

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// recorder narrates, each line stamped with the time since the start.
type recorder struct {
	mu    sync.Mutex
	w     io.Writer
	start time.Time
}

func newRecorder(w io.Writer) *recorder { return &recorder{w: w, start: time.Now()} }

// printf writes one narrated line.
func (r *recorder) printf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	fmt.Fprintf(r.w, "[%6.2fs %s] %s\n", now.Sub(r.start).Seconds(), now.Format("15:04:05.000"), fmt.Sprintf(format, args...))
}
