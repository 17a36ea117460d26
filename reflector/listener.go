package reflector

import (
	"sync/atomic"
	"time"
)

type notificationKind uint8

const (
	addNotification notificationKind = iota
	updateNotification
	deleteNotification
)

// notification is one handler call waiting in a listener.
type notification[T any] struct {
	kind    notificationKind
	oldObj  T // update only
	newObj  T
	initial bool // add: part of the initial list (or of a replay)
	unknown bool // delete: final state unknown
}

// listener delivers notifications to one handler. add hands a notification
// to the pop goroutine over the unbuffered addCh; pop parks whatever the
// handler has not taken yet in an unbounded ring and feeds nextCh; run
// calls the handler. A slow handler therefore only grows its own ring and
// never blocks the informer or other handlers.
type listener[T any] struct {
	handler ResourceEventHandler[T]
	onPanic func(recovered any)

	// addCh carries notifications from distribute to pop; closed (by the
	// processor, under its lock) to stop the listener.
	addCh chan notification[T]
	// nextCh carries notifications from pop to run; closed by pop on exit.
	nextCh chan notification[T]

	// pending counts notifications added but not yet handled.
	pending atomic.Int64
	// initialPending counts initial-list notifications not yet handled.
	initialPending atomic.Int64

	// resyncPeriod is this handler's resync period (0: none); nextResync
	// is guarded by the processor's lock.
	resyncPeriod time.Duration
	nextResync   time.Time
}

func newListener[T any](h ResourceEventHandler[T], resync time.Duration, onPanic func(any)) *listener[T] {
	return &listener[T]{
		handler:      h,
		onPanic:      onPanic,
		addCh:        make(chan notification[T]),
		nextCh:       make(chan notification[T]),
		resyncPeriod: resync,
		nextResync:   time.Now().Add(resync),
	}
}

// add queues n. The caller holds the processor's lock (read or write), so
// addCh cannot be closed meanwhile; pop always receives promptly.
func (l *listener[T]) add(n notification[T]) {
	l.pending.Add(1)
	if n.initial {
		l.initialPending.Add(1)
	}
	l.addCh <- n
}

// pop moves notifications from addCh to nextCh, buffering in between.
func (l *listener[T]) pop() {
	defer close(l.nextCh)
	var buf ring[notification[T]]
	var next notification[T]
	var out chan notification[T] // nil while there is nothing to send
	for {
		select {
		case out <- next:
			var ok bool
			if next, ok = buf.pop(); !ok {
				out = nil
			}
		case n, ok := <-l.addCh:
			if !ok {
				return
			}
			if out == nil {
				next, out = n, l.nextCh
			} else {
				buf.push(n)
			}
		}
	}
}

// run calls the handler for each notification, in order.
func (l *listener[T]) run() {
	for n := range l.nextCh {
		l.call(n)
		if n.initial {
			l.initialPending.Add(-1)
		}
		l.pending.Add(-1)
	}
}

// call runs the handler, recovering (and reporting) a panic so that one
// bad event does not stop the listener.
func (l *listener[T]) call(n notification[T]) {
	defer func() {
		if r := recover(); r != nil && l.onPanic != nil {
			l.onPanic(r)
		}
	}()
	switch n.kind {
	case addNotification:
		l.handler.OnAdd(n.newObj, n.initial)
	case updateNotification:
		l.handler.OnUpdate(n.oldObj, n.newObj)
	case deleteNotification:
		l.handler.OnDelete(n.newObj, n.unknown)
	}
}
