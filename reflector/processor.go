package reflector

import (
	"sync"
	"time"
)

// processor fans notifications out to listeners. Lock order: the informer's
// blockDeltas, then processor.mu.
type processor[T any] struct {
	mu sync.RWMutex
	// listeners maps each listener to whether it is due for resync in the
	// current round (see shouldResync).
	listeners map[*listener[T]]bool
	started   bool
	stopped   bool
	wg        sync.WaitGroup // listener goroutines
}

func newProcessor[T any]() *processor[T] {
	return &processor[T]{listeners: map[*listener[T]]bool{}}
}

// addListener registers l, starting its goroutines if the processor runs.
// It reports false when the processor has stopped.
func (p *processor[T]) addListener(l *listener[T]) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return false
	}
	p.listeners[l] = false
	if p.started {
		p.startLocked(l)
	}
	return true
}

// removeListener unregisters l and stops it: notifications still buffered
// are dropped, a handler call in progress finishes.
func (p *processor[T]) removeListener(l *listener[T]) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.listeners[l]; !ok {
		return false
	}
	delete(p.listeners, l)
	if p.started {
		close(l.addCh)
	}
	return true
}

func (p *processor[T]) startLocked(l *listener[T]) {
	p.wg.Go(l.pop)
	p.wg.Go(l.run)
}

// start starts every registered listener.
func (p *processor[T]) start() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.started = true
	for l := range p.listeners {
		p.startLocked(l)
	}
}

// stop stops every listener and waits for their goroutines; handler calls
// in progress finish first.
func (p *processor[T]) stop() {
	p.mu.Lock()
	p.stopped = true
	if p.started {
		for l := range p.listeners {
			close(l.addCh)
		}
	}
	p.listeners = map[*listener[T]]bool{}
	p.mu.Unlock()
	p.wg.Wait()
}

// distribute hands n to every listener, or with sync only to the
// listeners due for resync.
func (p *processor[T]) distribute(n notification[T], sync bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if !p.started || p.stopped {
		return
	}
	for l, syncing := range p.listeners {
		if !sync || syncing {
			l.add(n)
		}
	}
}

// shouldResync marks the listeners whose resync period has elapsed and
// reports whether there is any.
func (p *processor[T]) shouldResync() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	any := false
	for l := range p.listeners {
		due := l.resyncPeriod > 0 && !now.Before(l.nextResync)
		p.listeners[l] = due
		if due {
			any = true
			l.nextResync = now.Add(l.resyncPeriod)
		}
	}
	return any
}
