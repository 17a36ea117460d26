package server

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/listwatch/listwatch/storage"
)

// statusFor converts any error into the metav1.Status the API returns for
// it, through storage.StatusOf: apierrors.StatusError and *storage.Error
// keep their code and reason (however wrapped); context deadlines are 504;
// everything else is a real fault, 500.
func statusFor(err error) metav1.Status {
	st := storage.StatusOf(err)
	st.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
	if st.Status == "" {
		st.Status = metav1.StatusFailure
	}
	if st.Code == 0 {
		st.Code = http.StatusInternalServerError
	}
	if msg, ok := publicMessage(err); ok && (st.Code == http.StatusInternalServerError || isStorageError(err)) {
		st.Message = msg
		if st.Reason == metav1.StatusReasonInternalError {
			st.Details = nil // NewInternalError repeats the cause
		}
	}
	if retryable(err) && (st.Details == nil || st.Details.RetryAfterSeconds <= 0) {
		if st.Details == nil {
			st.Details = &metav1.StatusDetails{}
		}
		st.Details.RetryAfterSeconds = storage.UnavailableRetryAfterSeconds
	}
	return st
}

// retryable: the request never reached etcd (503 ServiceUnavailable), so
// the answer carries Retry-After. A timeout (504) does not: a write that
// timed out may have been applied, and a retry could apply it twice.
func retryable(err error) bool {
	return errors.Is(err, storage.ErrUnavailable)
}

// objectError maps a storage error about one named object to the status
// Kubernetes returns for it (with its exact wording and details), and
// anything else through statusFor.
func (r *resource) objectError(err error, name string) error {
	gr := k8sschema.GroupResource{Group: r.Group, Resource: r.Plural}
	switch {
	case storage.IsCode(err, storage.CodeNotFound):
		return apierrors.NewNotFound(gr, name)
	case storage.IsCode(err, storage.CodeKeyExists):
		return apierrors.NewAlreadyExists(gr, name)
	case storage.IsCode(err, storage.CodeConflict):
		return apierrors.NewConflict(gr, name, conflictCause(err))
	}
	return err
}

// writeError writes err as a Status body. Nothing else has been written
// to w before.
func (s *Server) writeError(w http.ResponseWriter, req *http.Request, err error) {
	st := statusFor(err)
	if clientGone(req, err) {
		// Not a failure of the server: no WARN, no 5xx in the metrics.
		s.log.Debug("client went away", "method", req.Method, "path", req.URL.Path, "err", err)
		st.Code = StatusClientClosedRequest
	} else if st.Code >= 500 {
		s.log.Warn("request failed", "method", req.Method, "path", req.URL.Path, "code", st.Code, "err", err)
	} else if _, ok := publicMessage(err); ok {
		s.log.Debug("request refused", "method", req.Method, "path", req.URL.Path, "code", st.Code, "err", err)
	}
	if st.Details != nil && st.Details.RetryAfterSeconds > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(st.Details.RetryAfterSeconds)))
	}
	writeJSON(w, int(st.Code), &st)
}

// StatusClientClosedRequest is the status recorded (metrics, request
// log) for a request whose client went away before its answer (nginx's
// 499): a cancellation, not a server failure.
const StatusClientClosedRequest = 499

// clientGone: err is the cancellation of req by its client (it closed the
// connection or the stream). The server's own deadlines are not
// cancellations, nor is an error that merely came after one (net/http
// cancels a request whose body read failed).
func clientGone(req *http.Request, err error) bool {
	return errors.Is(err, context.Canceled) && errors.Is(req.Context().Err(), context.Canceled)
}

// writeJSON encodes v and writes it with the given code. Encoding happens
// first, so a failure writes a 500 Status instead of a partial body.
func writeJSON(w http.ResponseWriter, code int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		st := apierrors.NewInternalError(err).ErrStatus
		st.TypeMeta = metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}
		body, _ = json.Marshal(&st)
		code = http.StatusInternalServerError
	}
	writeBody(w, code, body)
}

func writeBody(w http.ResponseWriter, code int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)+1))
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = w.Write(body)
	_, _ = w.Write([]byte{'\n'})
}

// badRequest returns a 400 BadRequest error.
func badRequest(msg string) error { return apierrors.NewBadRequest(msg) }

// methodNotAllowed returns a 405 MethodNotAllowed error.
func methodNotAllowed(method, what string) error {
	return apierrors.NewMethodNotSupported(k8sschema.GroupResource{Resource: what}, method)
}

// unprocessable is a 422 for a request that is well formed but cannot be
// carried out.
func unprocessable(msg string) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status: metav1.StatusFailure, Code: http.StatusUnprocessableEntity,
		Reason: metav1.StatusReasonInvalid, Message: msg,
	}}
}

// publicMessage is the message a client is told for err when err's own
// text carries what is not the client's business: a storage error's key
// and its cause's internals (etcd and gRPC errors), or the text of an
// error that is not an API status (a 500). writeError logs err in full.
// ok is false when err's message is fine as it is.
func publicMessage(err error) (msg string, ok bool) {
	var api apierrors.APIStatus
	var se *storage.Error
	switch {
	case errors.As(err, &se):
		// No key, endpoint or etcd/gRPC cause: those stay in the log.
		return se.ClientMessage(), true
	case errors.As(err, &api), errors.Is(err, context.DeadlineExceeded):
		return "", false
	}
	return "an error on the server prevented the request from succeeding (the server logs the cause)", true
}

// isStorageError reports whether err is (or wraps) a *storage.Error.
func isStorageError(err error) bool {
	var se *storage.Error
	return errors.As(err, &se)
}

// conflictCause is the cause a 409 Conflict names for a storage conflict:
// its message without the storage key.
func conflictCause(err error) error {
	if msg, ok := publicMessage(err); ok {
		return errors.New(msg)
	}
	return err
}

// errPathNotFound is Kubernetes' 404 for a path that names nothing it
// serves.
var errPathNotFound = &apierrors.StatusError{ErrStatus: metav1.Status{
	Status: metav1.StatusFailure, Code: http.StatusNotFound, Reason: metav1.StatusReasonNotFound,
	Message: "the server could not find the requested resource",
}}
