package main

import (
	"fmt"
	"io"
	"time"
)

// narrator prints the walkthrough's timeline: sections and tagged lines with
// the time since the start.
type narrator struct {
	out   io.Writer
	start time.Time
	step  int
}

func newNarrator(out io.Writer) *narrator { return &narrator{out: out, start: time.Now()} }

func (n *narrator) section(title string) {
	n.step++
	fmt.Fprintf(n.out, "\n== %d. %s\n", n.step, title)
}

func (n *narrator) say(tag, format string, args ...any) {
	fmt.Fprintf(n.out, "[%6.2fs] %-9s %s\n", time.Since(n.start).Seconds(), tag, fmt.Sprintf(format, args...))
}
