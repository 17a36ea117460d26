package storage

import (
	"context"
	"errors"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// StatusOf returns the metav1.Status that carries err across a process
// boundary (an HTTP answer, a watch ERROR event): an *Error or any other
// apimachinery APIStatus keeps its code and reason (however wrapped), a
// context deadline is 504 Timeout, anything else is 500 InternalError. The
// message names no key, endpoint or etcd/gRPC cause (see
// Error.ClientMessage); an error that is not a status is not quoted.
// FromStatus turns the Status back into an *Error.
func StatusOf(err error) metav1.Status {
	var api apierrors.APIStatus
	switch {
	case errors.As(err, &api):
		return api.Status()
	case errors.Is(err, context.DeadlineExceeded):
		return apierrors.NewTimeoutError("the request did not complete in time", 0).ErrStatus
	}
	st := apierrors.NewInternalError(errors.New(internalMessage)).ErrStatus
	st.Message, st.Details = internalMessage, nil
	return st
}

// internalMessage is what a client is told of an error no code stands
// for: its text may carry anything (keys, etcd's and gRPC's words), so it
// stays in the server's log.
const internalMessage = "an error on the server prevented the request from succeeding (the server logs the cause)"

// FromStatus is the inverse of StatusOf: the error a Status (the object of
// a watch ERROR event, the body of a non-2xx answer) stands for. A Status
// of a storage error becomes an *Error again, so that consumers test
// errors.Is(err, ErrGone), ErrUnavailable, ErrTimeout, ... whichever side
// of the wire the error was made on; its Status method returns st
// unchanged, so apimachinery's helpers (apierrors.IsResourceExpired, ...)
// answer as they did for the original. A Status no storage code stands for
// (401, 403, 405, ...) is returned as an *apierrors.StatusError. nil
// gives nil.
//
// Two pairs of codes share one Status: CodeNotReady and
// CodeTooManyRequests (429) come back as CodeTooManyRequests, which then
// matches ErrNotReady too; CodeCorruptObj is told from CodeInternal (500)
// by its StoreReadError reason or its fixed message.
func FromStatus(st *metav1.Status) error {
	if st == nil {
		return nil
	}
	code, ok := codeOfStatus(st)
	if !ok {
		return &apierrors.StatusError{ErrStatus: *st}
	}
	kept := st.DeepCopy()
	e := &Error{Code: code, Msg: st.Message, Continue: st.Continue, status: kept}
	if st.Details != nil {
		e.RetryAfterSeconds = int(st.Details.RetryAfterSeconds)
	}
	return e
}

// codeOfStatus maps a Status to the storage code whose Status it is (the
// reverse of codeTable): by reason, then by HTTP status; a 504 with the
// ResourceVersionTooLarge cause is CodeTooLargeResourceVersion, a 500
// InternalError with a corrupt object's message is CodeCorruptObj.
func codeOfStatus(st *metav1.Status) (Code, bool) {
	code, ok := byReason[st.Reason]
	if !ok {
		code, ok = byHTTPStatus[st.Code]
	}
	switch {
	case !ok:
		return CodeUnknown, false
	case code == CodeTimeout && hasCause(st, metav1.CauseTypeResourceVersionTooLarge):
		return CodeTooLargeResourceVersion, true
	case code == CodeInternal && st.Reason == metav1.StatusReasonInternalError && strings.HasPrefix(st.Message, corruptObjMsg):
		return CodeCorruptObj, true
	}
	return code, true
}

func hasCause(st *metav1.Status, t metav1.CauseType) bool {
	if st.Details == nil {
		return false
	}
	for _, c := range st.Details.Causes {
		if c.Type == t {
			return true
		}
	}
	return false
}
