package demorun

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// group runs a demo's parts on goroutines and keeps the first error one
// of them failed with (a part ending with context.Canceled did not fail).
type group struct {
	wg  sync.WaitGroup
	mu  sync.Mutex
	err error // guarded by mu
}

// Go runs f, the part called name, on a goroutine of g.
func (g *group) Go(name string, f func() error) {
	g.wg.Go(func() {
		if err := f(); err != nil && !errors.Is(err, context.Canceled) {
			g.mu.Lock()
			if g.err == nil {
				g.err = fmt.Errorf("%s: %w", name, err)
			}
			g.mu.Unlock()
		}
	})
}

// Wait waits for every part and returns the first error one failed with.
func (g *group) Wait() error {
	g.wg.Wait()
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.err
}
