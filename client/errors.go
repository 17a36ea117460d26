package client

import (
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/listwatch/listwatch/storage"
)

// The predicates below hold for the library's errors whichever side made
// them: a *storage.Error (from storage, or decoded from an HTTP Status
// with storage.FromStatus) or an apimachinery StatusError (the registry's
// write rules).

// IsNotFound reports whether err says the object does not exist (404).
func IsNotFound(err error) bool {
	return storage.IsCode(err, storage.CodeNotFound) || apierrors.IsNotFound(err)
}

// IsAlreadyExists reports whether err says the object exists already (409
// AlreadyExists).
func IsAlreadyExists(err error) bool {
	return storage.IsCode(err, storage.CodeKeyExists) || apierrors.IsAlreadyExists(err)
}

// IsConflict reports whether err is a write conflict: a stale
// resourceVersion or a failed precondition (409 Conflict).
func IsConflict(err error) bool {
	return storage.IsCode(err, storage.CodeConflict) || apierrors.IsConflict(err)
}

// IsInvalid reports whether err says the object is invalid (422).
func IsInvalid(err error) bool {
	return storage.IsCode(err, storage.CodeInvalidObj) || apierrors.IsInvalid(err)
}

// IsBadRequest reports whether err says the request was malformed (400),
// such as a bad selector or an unsupported patch.
func IsBadRequest(err error) bool {
	return storage.IsCode(err, storage.CodeInvalidArgument) || apierrors.IsBadRequest(err)
}

// IsTooManyRequests reports whether err says the server shed the request
// (429), as NewHTTP returns it once its retries are spent.
func IsTooManyRequests(err error) bool {
	return storage.IsCode(err, storage.CodeTooManyRequests) || storage.IsCode(err, storage.CodeNotReady) ||
		apierrors.IsTooManyRequests(err)
}

// IgnoreNotFound returns nil for a not-found error and err otherwise: the
// usual first line after a Reconcile's Get.
func IgnoreNotFound(err error) error {
	if IsNotFound(err) {
		return nil
	}
	return err
}

// IgnoreAlreadyExists returns nil for an already-exists error and err
// otherwise.
func IgnoreAlreadyExists(err error) error {
	if IsAlreadyExists(err) {
		return nil
	}
	return err
}
