package filters

import (
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// InFlight bounds the requests served at once, read-only and mutating
// separately, as kube-apiserver's max-in-flight filter does. A nil
// semaphore is no limit.
type InFlight struct {
	readOnly chan struct{}
	mutating chan struct{}
}

// NewInFlight returns the limits; a limit <= 0 is none.
func NewInFlight(readOnly, mutating int) *InFlight {
	l := &InFlight{}
	if readOnly > 0 {
		l.readOnly = make(chan struct{}, readOnly)
	}
	if mutating > 0 {
		l.mutating = make(chan struct{}, mutating)
	}
	return l
}

// Request kinds of the in-flight limits, as kube-apiserver labels them.
const (
	KindReadOnly = "readOnly"
	KindMutating = "mutating"
)

// RequestKind is the limit req counts against: GET and HEAD are
// read-only, every other method mutating.
func RequestKind(req *http.Request) string {
	if req.Method == http.MethodGet || req.Method == http.MethodHead {
		return KindReadOnly
	}
	return KindMutating
}

func (l *InFlight) semaphore(kind string) chan struct{} {
	if kind == KindReadOnly {
		return l.readOnly
	}
	return l.mutating
}

// Acquire takes a slot of kind's limit; it returns the function that gives
// it back, and false (with nothing taken) when the limit is reached.
func (l *InFlight) Acquire(kind string) (release func(), ok bool) {
	sem := l.semaphore(kind)
	if sem == nil {
		return func() {}, true
	}
	select {
	case sem <- struct{}{}:
		return func() { <-sem }, true
	default:
		return nil, false
	}
}

// Count is the number of requests of kind being served (0 without a
// limit: they are counted only under one).
func (l *InFlight) Count(kind string) int {
	return len(l.semaphore(kind))
}

// ErrTooManyRequests is the answer past an in-flight limit: 429 with
// Retry-After: 1, worded as kube-apiserver words it.
func ErrTooManyRequests() error {
	return apierrors.NewTooManyRequests("Too many requests, please try again later.", 1)
}
