package k8scompat

import (
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	k8sstorage "k8s.io/apiserver/pkg/storage"

	lwstorage "github.com/listwatch/listwatch/storage"
)

// op names the kind of request an error came from. Kubernetes words its 410
// Gone errors differently for lists, paged lists and watches, and clients and
// tests match on those words.
type op int

const (
	opOther op = iota
	opList
	opPagedList
	opWatch
)

// The messages Kubernetes' etcd3 store uses for 410 Gone.
const (
	msgListExpired  = "The resourceVersion for the provided list is too old."
	msgWatchExpired = "The resourceVersion for the provided watch is too old."
	msgContinueGone = "The provided continue parameter is too old to display a consistent list result. " +
		"You can start a new list without the continue parameter."
)

// ToK8sError translates an error returned by a listwatch store into the error
// Kubernetes' storage.Interface returns in the same situation, so that the
// helpers of k8s.io/apiserver/pkg/storage (IsNotFound, IsExist,
// IsInvalidObj, IsTooLargeResourceVersion, IsInternalError, ...) and of
// k8s.io/apimachinery/pkg/api/errors (IsResourceExpired, IsBadRequest,
// IsTooManyRequests, ...) classify it correctly. Errors that are not
// listwatch *storage.Error values (for example the errors returned by an
// UpdateFunc or a ValidateObjectFunc) are returned unchanged.
//
// The mapping:
//
//	listwatch code          Kubernetes error
//	NotFound                *storage.StorageError ErrCodeKeyNotFound
//	KeyExists               *storage.StorageError ErrCodeKeyExists
//	Conflict                *storage.StorageError ErrCodeInvalidObj (precondition failed; the registry answers 409)
//	InvalidObj              *storage.StorageError ErrCodeInvalidObj
//	Timeout                 *storage.StorageError ErrCodeTimeout
//	Unreachable             *storage.StorageError ErrCodeUnreachable
//	CorruptObj              storage.InternalError wrapping a *StorageError ErrCodeCorruptObj
//	                        (both IsInternalError and IsCorruptObject hold); from a list:
//	                        with CorruptKeys, apierrors StatusError 500 StoreReadError with
//	                        one cause per key (Kubernetes' aggregated error), else the bare
//	                        storage.InternalError "unable to transform key ..." of a list
//	                        that stops at its first corrupt object
//	Internal                storage.InternalError
//	InvalidArgument         apierrors BadRequest (400)
//	Gone                    apierrors ResourceExpired (410)
//	TooLargeResourceVersion storage.NewTooLargeResourceVersionError (504 with the ResourceVersionTooLarge cause)
//	NotReady, TooManyRequests apierrors TooManyRequests (429)
//	RequestTooLarge         apierrors RequestEntityTooLarge (413)
//	anything else           apierrors StatusError built from the error's Status()
func ToK8sError(err error) error {
	return toK8s(err, opOther)
}

func toK8s(err error, o op) error {
	if err == nil {
		return nil
	}
	var e *lwstorage.Error
	if !errors.As(err, &e) {
		return err
	}
	switch e.Code {
	case lwstorage.CodeNotFound:
		return k8sstorage.NewKeyNotFoundError(e.Key, e.ResourceVersion)
	case lwstorage.CodeKeyExists:
		return k8sstorage.NewKeyExistsError(e.Key, e.ResourceVersion)
	case lwstorage.CodeConflict, lwstorage.CodeInvalidObj:
		// listwatch retries compare-and-swap conflicts itself; a Conflict that
		// reaches the caller is a failed precondition, which Kubernetes
		// reports as InvalidObj ("Precondition failed: ...").
		return k8sstorage.NewInvalidObjError(e.Key, e.Error())
	case lwstorage.CodeTimeout:
		return k8sstorage.NewTimeoutError(e.Key, e.Error())
	case lwstorage.CodeUnreachable:
		return k8sstorage.NewUnreachableError(e.Key, e.ResourceVersion)
	case lwstorage.CodeCorruptObj:
		switch {
		case len(e.CorruptKeys) > 0:
			return &apierrors.StatusError{ErrStatus: e.Status()}
		case (o == opList || o == opPagedList) && e.Err != nil:
			return k8sstorage.NewInternalError(e.Err)
		}
		return k8sstorage.NewInternalError(k8sstorage.NewCorruptObjError(e.Key, err))
	case lwstorage.CodeInternal:
		return k8sstorage.NewInternalError(err)
	// The messages of the statuses made here reach the client as they are:
	// the storage error's ClientMessage, with no storage key or etcd text.
	case lwstorage.CodeInvalidArgument:
		return apierrors.NewBadRequest(e.ClientMessage())
	case lwstorage.CodeGone:
		return goneError(e, o)
	case lwstorage.CodeTooLargeResourceVersion:
		return k8sstorage.NewTooLargeResourceVersionError(uint64(e.ResourceVersion), uint64(e.Oldest), e.RetryAfterSeconds)
	case lwstorage.CodeNotReady, lwstorage.CodeTooManyRequests:
		retry := e.RetryAfterSeconds
		if retry <= 0 {
			retry = 1
		}
		return apierrors.NewTooManyRequests(e.ClientMessage(), retry)
	case lwstorage.CodeRequestTooLarge:
		return apierrors.NewRequestEntityTooLargeError(e.ClientMessage())
	}
	return &apierrors.StatusError{ErrStatus: e.Status()}
}

func goneError(e *lwstorage.Error, o op) error {
	var st *apierrors.StatusError
	switch o {
	case opList:
		st = apierrors.NewResourceExpired(msgListExpired)
	case opPagedList:
		st = apierrors.NewResourceExpired(msgContinueGone)
		// The fresh token listwatch offers continues the list at the latest
		// revision (an inconsistent list), as Kubernetes' does.
		st.ErrStatus.ListMeta.Continue = e.Continue
	case opWatch:
		st = apierrors.NewResourceExpired(msgWatchExpired)
	default:
		st = apierrors.NewResourceExpired(e.ClientMessage())
	}
	// What a client may see: no storage key, no etcd or gRPC text.
	st.ErrStatus.Message = fmt.Sprintf("%s (%s)", st.ErrStatus.Message, e.ClientMessage())
	return st
}

// FromK8sError translates an error in Kubernetes' storage vocabulary
// (*storage.StorageError, storage.InternalError, storage.InvalidError,
// storage.ErrResourceVersionSetOnCreate, storage.ErrStorageNotReady, or an
// apierrors status error) into a listwatch *storage.Error wrapping it, so that
// errors.Is against the listwatch sentinels works on it. Errors with no
// listwatch equivalent are returned unchanged.
func FromK8sError(err error) error {
	if err == nil {
		return nil
	}
	var lw *lwstorage.Error
	if errors.As(err, &lw) {
		return err
	}
	if code, ok := k8sCode(err); ok {
		e := &lwstorage.Error{Code: code, Err: err}
		var se *k8sstorage.StorageError
		if errors.As(err, &se) {
			e.Key, e.ResourceVersion = se.Key, se.ResourceVersion
		}
		return e
	}
	return err
}

func k8sCode(err error) (lwstorage.Code, bool) {
	var se *k8sstorage.StorageError
	if errors.As(err, &se) {
		switch se.Code {
		case k8sstorage.ErrCodeKeyNotFound:
			return lwstorage.CodeNotFound, true
		case k8sstorage.ErrCodeKeyExists:
			return lwstorage.CodeKeyExists, true
		case k8sstorage.ErrCodeResourceVersionConflicts:
			return lwstorage.CodeConflict, true
		case k8sstorage.ErrCodeInvalidObj:
			return lwstorage.CodeInvalidObj, true
		case k8sstorage.ErrCodeUnreachable:
			return lwstorage.CodeUnreachable, true
		case k8sstorage.ErrCodeTimeout:
			return lwstorage.CodeTimeout, true
		case k8sstorage.ErrCodeCorruptObj:
			return lwstorage.CodeCorruptObj, true
		}
	}
	switch {
	case errors.Is(err, k8sstorage.ErrResourceVersionSetOnCreate), k8sstorage.IsInvalidError(err):
		return lwstorage.CodeInvalidObj, true
	case errors.Is(err, k8sstorage.ErrStorageNotReady):
		return lwstorage.CodeNotReady, true
	case k8sstorage.IsTooLargeResourceVersion(err):
		return lwstorage.CodeTooLargeResourceVersion, true
	case apierrors.IsResourceExpired(err), apierrors.IsGone(err):
		return lwstorage.CodeGone, true
	case apierrors.IsBadRequest(err):
		return lwstorage.CodeInvalidArgument, true
	case apierrors.IsTooManyRequests(err):
		return lwstorage.CodeTooManyRequests, true
	case apierrors.IsRequestEntityTooLargeError(err):
		return lwstorage.CodeRequestTooLarge, true
	case apierrors.IsNotFound(err):
		return lwstorage.CodeNotFound, true
	case apierrors.IsAlreadyExists(err):
		return lwstorage.CodeKeyExists, true
	case apierrors.IsConflict(err):
		return lwstorage.CodeConflict, true
	case apierrors.IsTimeout(err), apierrors.IsServerTimeout(err):
		return lwstorage.CodeTimeout, true
	}
	return lwstorage.CodeUnknown, false
}
