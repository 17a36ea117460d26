package server

import (
	"context"
	"errors"
	"net/http"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/listwatch/listwatch/storage"
)

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
