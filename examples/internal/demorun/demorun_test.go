package demorun

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"strings"
	"testing"
	"time"

	"github.com/listwatch/listwatch/reflector/workqueue/workqueuetest"
)

// The group keeps the first failure, named after its part, and does not
// count a part that ended because its context was cancelled.
func TestGroupKeepsTheFirstFailure(t *testing.T) {
	var g group
	boom := errors.New("boom")
	first := make(chan struct{})
	g.Go("stopped", func() error { return context.Canceled })
	g.Go("failed", func() error { defer close(first); return boom })
	g.Go("later", func() error { <-first; return errors.New("later") })
	err := g.Wait()
	if !errors.Is(err, boom) || !strings.HasPrefix(err.Error(), "failed: ") {
		t.Fatalf("Wait: %v, want the failed part's boom", err)
	}
	var ok group
	ok.Go("stopped", func() error { return context.Canceled })
	if err := ok.Wait(); err != nil {
		t.Fatalf("Wait with only a cancelled part: %v", err)
	}
}

// Every line is stamped, in order, and Chain calls both callbacks.
func TestNarratorAndChain(t *testing.T) {
	var out bytes.Buffer
	n := NewNarrator(&out, nil)
	var got []string
	f := Chain(func(s string) { n.Printf("a %s", s) }, func(s string) { got = append(got, s) })
	f("x")
	Chain(func(s string) { n.Printf("b %s", s) }, nil)("y")
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "[") || !strings.HasSuffix(lines[0], "] a x") ||
		!strings.HasSuffix(lines[1], "] b y") || len(got) != 1 || got[0] != "x" {
		t.Fatalf("narration %q, second callback got %q", lines, got)
	}
}

// Await returns once its condition holds, and names what it waited for
// when it times out.
func TestAwait(t *testing.T) {
	calls := 0
	if err := Await(context.Background(), time.Minute, "three calls", func() bool { calls++; return calls == 3 }); err != nil {
		t.Fatal(err)
	}
	err := Await(context.Background(), time.Millisecond, "nothing", func() bool { return false })
	if err == nil || !strings.Contains(err.Error(), "waiting for nothing") {
		t.Fatalf("Await that cannot hold: %v", err)
	}
}

// A Narrator stamps with its clock: the time since it started and the
// time of day.
func TestNarratorClock(t *testing.T) {
	var out bytes.Buffer
	clock := workqueuetest.NewFakeClock(time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC))
	n := NewNarrator(&out, clock)
	clock.Step(1500 * time.Millisecond)
	n.Printf("x")
	if got, want := out.String(), "[  1.50s 10:00:01.500] x\n"; got != want {
		t.Fatalf("narration %q, want %q", got, want)
	}
}

// Play narrates each step, stops at the first that fails and wraps
// ErrStepFailed naming it; a scenario that holds ends with its verdict.
func TestPlay(t *testing.T) {
	var out bytes.Buffer
	ran := 0
	steps := []Step[*int]{
		{Title: "one", Run: func(n *int) error { *n++; return nil }},
		{Title: "two", Run: func(n *int) error { *n++; return errors.New("boom") }},
		{Title: "three", Run: func(n *int) error { *n++; return nil }},
	}
	err := Play(NewNarrator(&out, nil), &ran, steps)
	if !errors.Is(err, ErrStepFailed) || !strings.Contains(err.Error(), "2 (two): boom") || ran != 2 {
		t.Fatalf("Play: %v after %d steps, want step 2 failed after 2", err, ran)
	}
	if s := out.String(); !strings.Contains(s, "── step 2: two") || !strings.Contains(s, "FAIL step 2: boom") ||
		strings.Contains(s, "step 3") {
		t.Fatalf("narration:\n%s", s)
	}
	out.Reset()
	if err := Play(NewNarrator(&out, nil), &ran, steps[:1]); err != nil || !strings.Contains(out.String(), "all 1 steps held") {
		t.Fatalf("Play: %v, narration:\n%s", err, out.String())
	}
}

// Default fills only what is zero or negative.
func TestDefault(t *testing.T) {
	a, b, c := 0, -time.Second, 2.5
	Default(&a, 3)
	Default(&b, time.Minute)
	Default(&c, 1)
	if a != 3 || b != time.Minute || c != 2.5 {
		t.Fatalf("Default: %d %s %g", a, b, c)
	}
}

// A command's flags set the cluster options; the fields left zero take
// the defaults given, and the prefix /registry.
func TestClusterOptions(t *testing.T) {
	var o ClusterOptions
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse([]string{"-zones=5", "-grace-period=3s", "-listen=:8080"}); err != nil {
		t.Fatal(err)
	}
	o = o.WithDefaults(ClusterOptions{Zones: 2, NodesPerZone: 4, Grace: time.Second, StepTimeout: time.Minute})
	if o.Zones != 5 || o.NodesPerZone != 4 || o.Grace != 3*time.Second || o.Renew != 0 || o.Listen != ":8080" ||
		o.Prefix != "/registry" || o.StepTimeout != time.Minute {
		t.Fatalf("options %+v", o)
	}
}
