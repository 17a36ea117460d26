package server

import (
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// inflightLimits bound the requests served at once, read-only and
// mutating separately, as kube-apiserver's max-in-flight filter does.
// A nil semaphore is no limit.
type inflightLimits struct {
	readOnly chan struct{}
	mutating chan struct{}
}

func newInflightLimits(readOnly, mutating int) inflightLimits {
	var l inflightLimits
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
	kindReadOnly = "readOnly"
	kindMutating = "mutating"
)

// requestKind is the limit req counts against: GET and HEAD are
// read-only, every other method mutating.
func requestKind(req *http.Request) string {
	if req.Method == http.MethodGet || req.Method == http.MethodHead {
		return kindReadOnly
	}
	return kindMutating
}

func (l *inflightLimits) semaphore(kind string) chan struct{} {
	if kind == kindReadOnly {
		return l.readOnly
	}
	return l.mutating
}

// acquire takes a slot of kind's limit; it returns the semaphore to
// release (nil without a limit) and false when the limit is reached.
func (l *inflightLimits) acquire(kind string) (chan struct{}, bool) {
	sem := l.semaphore(kind)
	if sem == nil {
		return nil, true
	}
	select {
	case sem <- struct{}{}:
		return sem, true
	default:
		return nil, false
	}
}

// release gives back a slot taken by acquire.
func release(sem chan struct{}) {
	if sem != nil {
		<-sem
	}
}

// inflight is the number of requests of kind being served.
func (l *inflightLimits) inflight(kind string) int {
	return len(l.semaphore(kind))
}

// errTooManyRequests is the answer past an in-flight limit: 429 with
// Retry-After: 1, worded as kube-apiserver words it.
func errTooManyRequests() error {
	return apierrors.NewTooManyRequests("Too many requests, please try again later.", 1)
}
