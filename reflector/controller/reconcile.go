package controller

import (
	"context"
	"errors"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Request names the object to reconcile. It is comparable, so it is the
// work queue's item: many events for one object collapse into one Request.
type Request struct {
	types.NamespacedName
}

// Result tells the controller what to do after a successful Reconcile. It
// is ignored when Reconcile returns an error.
type Result struct {
	// RequeueAfter, when positive, reconciles the request again after this
	// long (and resets its error backoff).
	RequeueAfter time.Duration
	// Requeue reconciles the request again after the rate limiter's delay,
	// as if it had failed. RequeueAfter takes precedence.
	Requeue bool
}

// IsZero reports whether r asks for nothing more.
func (r Result) IsZero() bool { return r == Result{} }

// Reconciler makes the world match the desired state of one object. It is
// called with the object's name only, so it must read the current state
// itself (level-triggered): any number of events may have been folded into
// one call. The controller never runs two Reconciles for the same Request
// at once.
type Reconciler interface {
	Reconcile(ctx context.Context, req Request) (Result, error)
}

// ReconcileFunc adapts a function to a Reconciler.
type ReconcileFunc func(ctx context.Context, req Request) (Result, error)

// Reconcile implements Reconciler.
func (f ReconcileFunc) Reconcile(ctx context.Context, req Request) (Result, error) {
	return f(ctx, req)
}

// ErrTerminal matches (with errors.Is) every error made by TerminalError.
var ErrTerminal = errors.New("terminal error")

// TerminalError wraps err to say that retrying cannot help: the controller
// logs it and does not requeue the request (it is reconciled again only on
// a new event). errors.Is(e, ErrTerminal) is true for the result, and
// errors.Unwrap gives err back.
func TerminalError(err error) error {
	return &terminalError{err: err}
}

type terminalError struct{ err error }

func (e *terminalError) Error() string {
	if e.err == nil {
		return ErrTerminal.Error()
	}
	return "terminal error: " + e.err.Error()
}

func (e *terminalError) Unwrap() error { return e.err }

func (e *terminalError) Is(target error) bool { return target == ErrTerminal }
