package demorun

import (
	"errors"
	"fmt"
)

// ErrStepFailed wraps the error of the step that did not hold.
var ErrStepFailed = errors.New("demo: step failed")

// Step is one narrated, checked step of a demo's scenario: Run acts and
// returns an error when what it checks does not hold.
type Step[S any] struct {
	Title string
	Run   func(S) error
}

// Play runs steps in order on state, narrating each one's start and
// verdict to n, and returns an error wrapping ErrStepFailed, naming the
// step, for the first that fails.
func Play[S any](n *Narrator, state S, steps []Step[S]) error {
	for i, st := range steps {
		n.Printf("── step %d: %s", i+1, st.Title)
		if err := st.Run(state); err != nil {
			n.Printf("FAIL step %d: %v", i+1, err)
			return fmt.Errorf("%w: %d (%s): %v", ErrStepFailed, i+1, st.Title, err)
		}
		n.Printf("ok   step %d", i+1)
	}
	n.Printf("all %d steps held", len(steps))
	return nil
}
