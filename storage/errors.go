package storage

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Code classifies a storage error.
type Code int

// The error codes. Each has a sentinel *Error below for errors.Is.
const (
	CodeUnknown Code = iota
	CodeNotFound
	CodeKeyExists
	CodeConflict
	CodeInvalidObj
	CodeInvalidArgument
	CodeGone
	CodeTooLargeResourceVersion
	CodeNotReady
	CodeTimeout
	CodeCorruptObj
	CodeTooManyRequests
	CodeUnreachable
	CodeRequestTooLarge
	CodeInternal
)

// Sentinels for errors.Is: errors.Is(err, storage.ErrNotFound) is true for any
// *Error with CodeNotFound, however wrapped.
var (
	ErrNotFound                = &Error{Code: CodeNotFound}
	ErrKeyExists               = &Error{Code: CodeKeyExists}
	ErrConflict                = &Error{Code: CodeConflict}
	ErrInvalidObj              = &Error{Code: CodeInvalidObj}
	ErrInvalidArgument         = &Error{Code: CodeInvalidArgument}
	ErrGone                    = &Error{Code: CodeGone}
	ErrTooLargeResourceVersion = &Error{Code: CodeTooLargeResourceVersion}
	ErrNotReady                = &Error{Code: CodeNotReady}
	ErrTimeout                 = &Error{Code: CodeTimeout}
	ErrCorruptObj              = &Error{Code: CodeCorruptObj}
	ErrTooManyRequests         = &Error{Code: CodeTooManyRequests}
	ErrUnreachable             = &Error{Code: CodeUnreachable}
	// ErrUnavailable is ErrUnreachable under the name of its most common
	// cause: etcd cannot be reached (NewUnavailableError). 503 with Retry-After.
	ErrUnavailable     = ErrUnreachable
	ErrRequestTooLarge = &Error{Code: CodeRequestTooLarge}
	ErrInternal        = &Error{Code: CodeInternal}
)

// Error is a storage error. Match it with errors.Is against a sentinel, or
// errors.As to read Key and ResourceVersion.
type Error struct {
	// Code classifies the error.
	Code Code
	// Key is the storage key involved, if any.
	Key string
	// ResourceVersion is the RV involved: the conflicting or requested RV.
	ResourceVersion int64
	// Oldest is, for CodeGone, the oldest RV that could still be served
	// (0 if unknown); for CodeTooLargeResourceVersion, the current RV.
	Oldest int64
	// RetryAfterSeconds suggests a delay for CodeTooManyRequests, CodeNotReady
	// and CodeTooLargeResourceVersion.
	RetryAfterSeconds int
	// Continue is, for CodeGone on a paginated list whose continue token was
	// compacted, a fresh token that continues the list at the latest state
	// (an inconsistent list); "" otherwise. APIStatus puts it in the
	// status's ListMeta, as Kubernetes does.
	Continue string
	// CorruptKeys is, for CodeCorruptObj from a list, every key whose stored
	// value could not be read (Key is the first); Status reports one cause
	// per key.
	CorruptKeys []string
	// ListStopped is, for a list's CodeCorruptObj error with CorruptKeys, why
	// the list stopped before its end: ErrTooManyCorrupt when it met the
	// store's limit of corrupt objects, the error (not a corrupt object) that
	// ended it, or nil when it read to the end. Status adds it as a last cause.
	ListStopped error
	// Endpoints are, for CodeUnreachable from NewUnavailableError, the
	// storage endpoints (etcd client URLs) that could not be reached.
	Endpoints []string
	// Msg is a human-readable description.
	Msg string
	// Err is the underlying cause, if any.
	Err error

	// status is, for an Error made by FromStatus, the Status it was made
	// from: Status returns it unchanged.
	status *metav1.Status
}

// Error implements error. It is the whole story, for logs: the message,
// the key, the endpoints and the cause. What a client is told is
// Status().Message (ClientMessage), which names none of them.
func (e *Error) Error() string {
	msg := e.Msg
	if msg == "" {
		msg = e.Code.String()
	}
	if len(e.Endpoints) > 0 {
		msg = fmt.Sprintf("%s at %s", msg, strings.Join(e.Endpoints, ", "))
	}
	switch {
	case len(e.CorruptKeys) > 1:
		msg = fmt.Sprintf("%s (keys %s); the first (key %q)", msg, strings.Join(e.CorruptKeys, ", "), e.Key)
	case e.Key != "":
		msg = fmt.Sprintf("%s (key %q)", msg, e.Key)
	}
	if e.Err != nil {
		msg = msg + ": " + e.Err.Error()
	}
	if e.ListStopped != nil {
		msg = msg + "; list stopped: " + e.ListStopped.Error()
	}
	return msg
}

// ClientMessage is the message a client is told: Msg (or the code's
// text), and for CodeInvalidArgument what is wrong with the argument; never
// a storage key, an etcd endpoint or a cause from etcd or gRPC, which
// Error() keeps for the log.
func (e *Error) ClientMessage() string {
	if e.status != nil {
		return e.status.Message
	}
	msg := e.Msg
	if msg == "" {
		msg = e.Code.String()
	}
	if e.Code == CodeInvalidArgument && e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the underlying cause.
func (e *Error) Unwrap() error { return e.Err }

// Is reports whether target is an *Error with the same Code. It makes the
// sentinels work with errors.Is.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	if !ok {
		return false
	}
	// A 429 read from the wire may have been either code (see FromStatus).
	if e.status != nil && e.Code == CodeTooManyRequests && t.Code == CodeNotReady {
		return true
	}
	return t.Code == e.Code
}

// Status returns the Kubernetes status for the error, so that
// k8s.io/apimachinery/pkg/api/errors helpers (IsNotFound, IsGone,
// IsResourceExpired, IsConflict, ...) and the HTTP layer understand it.
func (e *Error) Status() metav1.Status {
	if e.status != nil {
		return *e.status.DeepCopy()
	}
	st := metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    int32(e.Code.HTTPStatus()),
		Reason:  e.Code.Reason(),
		Message: e.ClientMessage(),
	}
	st.ListMeta.Continue = e.Continue
	if len(e.CorruptKeys) > 0 {
		st.Reason = metav1.StatusReasonStoreReadError
		st.Details = &metav1.StatusDetails{Causes: corruptCauses(e.CorruptKeys, e.ListStopped)}
	}
	if e.RetryAfterSeconds > 0 || e.Code == CodeTooLargeResourceVersion {
		retry := e.RetryAfterSeconds
		if retry == 0 {
			retry = 1
		}
		st.Details = &metav1.StatusDetails{RetryAfterSeconds: int32(retry)}
		if e.Code == CodeTooLargeResourceVersion {
			st.Details.Causes = []metav1.StatusCause{{Type: metav1.CauseTypeResourceVersionTooLarge, Message: "Too large resource version"}}
		}
	}
	return st
}

// ErrTooManyCorrupt is the ListStopped of a list that met the store's limit
// of corrupt objects; its message is Kubernetes' wording.
var ErrTooManyCorrupt = errors.New("too many errors, the list is truncated")

// corruptCauses are the Status causes of a list that met corrupt objects, as
// Kubernetes words them: one per key (Field is the key), then why the list
// stopped early, if it did.
func corruptCauses(keys []string, stopped error) []metav1.StatusCause {
	causes := make([]metav1.StatusCause, 0, len(keys)+1)
	for _, k := range keys {
		causes = append(causes, metav1.StatusCause{Type: metav1.CauseTypeUnexpectedServerResponse, Field: k,
			Message: "stored object cannot be decoded"})
	}
	switch {
	case errors.Is(stopped, ErrTooManyCorrupt):
		causes = append(causes, metav1.StatusCause{Type: metav1.CauseTypeTooMany, Message: ErrTooManyCorrupt.Error()})
	case stopped != nil:
		causes = append(causes, metav1.StatusCause{Type: metav1.CauseTypeUnexpectedServerResponse, Message: stopped.Error()})
	}
	return causes
}

// NewNotFoundError reports that key does not exist (at rv, if known).
func NewNotFoundError(key string, rv int64) *Error {
	return &Error{Code: CodeNotFound, Key: key, ResourceVersion: rv}
}

// NewKeyExistsError reports that Create found key already present.
func NewKeyExistsError(key string, rv int64) *Error {
	return &Error{Code: CodeKeyExists, Key: key, ResourceVersion: rv}
}

// NewConflictError reports a failed precondition or compare-and-swap.
func NewConflictError(key string, rv int64, msg string) *Error {
	return &Error{Code: CodeConflict, Key: key, ResourceVersion: rv, Msg: msg}
}

// NewInvalidObjError reports an object that cannot be stored as given.
func NewInvalidObjError(key, msg string) *Error {
	return &Error{Code: CodeInvalidObj, Key: key, Msg: msg}
}

// NewInvalidArgumentError reports a malformed request argument (RV, continue
// token, key, selector).
func NewInvalidArgumentError(msg string, cause error) *Error {
	return &Error{Code: CodeInvalidArgument, Msg: msg, Err: cause}
}

// NewGoneError reports that requested is older than what can be served;
// oldest is the oldest RV still available (0 if unknown).
func NewGoneError(requested, oldest int64) *Error {
	msg := fmt.Sprintf("too old resource version: %d", requested)
	if oldest > 0 {
		msg = fmt.Sprintf("too old resource version: %d (%d)", requested, oldest)
	}
	return &Error{Code: CodeGone, ResourceVersion: requested, Oldest: oldest, Msg: msg}
}

// NewTooLargeResourceVersionError reports that requested is newer than the
// store reached (current) within the wait it allows, in Kubernetes' words
// ("Timeout: Too large resource version: N, current: C"). ResourceVersion
// and Oldest hold requested and current, math.MaxInt64 for a larger one
// (the message names it exactly).
func NewTooLargeResourceVersionError(requested, current uint64, retryAfterSeconds int) *Error {
	return &Error{Code: CodeTooLargeResourceVersion, ResourceVersion: int64(min(requested, math.MaxInt64)),
		Oldest: int64(min(current, math.MaxInt64)), RetryAfterSeconds: retryAfterSeconds,
		Msg: fmt.Sprintf("Timeout: Too large resource version: %d, current: %d", requested, current)}
}

// UnavailableRetryAfterSeconds is the Retry-After suggested with an
// unavailable storage: etcd is usually back, or its client reconnected,
// within a second or two.
const UnavailableRetryAfterSeconds = 1

// NewUnavailableError reports that the storage at endpoints (etcd client
// URLs) could not be asked: the request never reached it, so retrying is
// safe. cause is the last dial or RPC error seen; Error() names it and the
// endpoints (for the log), the client is told "etcd is unavailable". It
// matches ErrUnavailable (and ErrUnreachable) and is 503
// ServiceUnavailable with Retry-After.
func NewUnavailableError(endpoints []string, cause error) *Error {
	return &Error{Code: CodeUnreachable, Endpoints: slices.Clone(endpoints), Msg: "etcd is unavailable", Err: cause,
		RetryAfterSeconds: UnavailableRetryAfterSeconds}
}

// NewOutcomeUnknownError reports a write that was sent to etcd (or may
// have been) and got no answer: it may have been applied or not, so a
// retry could apply it twice (a generateName create would make a
// duplicate). It matches ErrTimeout and is 504 Timeout without
// Retry-After, as kube-apiserver answers an etcd call that timed out.
// cause (for the log) is what was seen.
func NewOutcomeUnknownError(endpoints []string, cause error) *Error {
	return &Error{Code: CodeTimeout, Endpoints: slices.Clone(endpoints), Err: cause,
		Msg: "etcd did not answer in time; the write may or may not have been applied"}
}

// corruptObjMsg is the message of NewCorruptObjError; FromStatus tells a
// corrupt object's 500 from other internal errors by it.
const corruptObjMsg = "stored object cannot be decoded"

// NewCorruptObjError reports a stored value that cannot be transformed or decoded.
func NewCorruptObjError(key string, err error) *Error {
	return &Error{Code: CodeCorruptObj, Key: key, Msg: corruptObjMsg, Err: err}
}

// IsCode reports whether err is an *Error (however wrapped) with code c.
func IsCode(err error, c Code) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == c
}
