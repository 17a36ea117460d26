package storage

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// InitialEventsAnnotationKey is the annotation set to "true" on the BOOKMARK
// event that ends the initial events of a watch started with
// SendInitialEvents (or RV "0" on implementations that emit it).
const InitialEventsAnnotationKey = metav1.InitialEventsAnnotationKey

// RevisionEndAnnotationKey is the annotation set to "true" on the BOOKMARK
// that ends a revision's events (see ListOptions.RevisionEndBookmarks).
const RevisionEndAnnotationKey = "listwatch.dev/revision-end"

// Interface is the storage contract shared by the etcd store and the cacher.
// All methods are safe for concurrent use. Keys are absolute paths inside the
// implementation's resource prefix, such as "/widgets/default/w1".
type Interface interface {
	// Versioner returns the versioner used to read and write resource
	// versions on objects and lists.
	Versioner() Versioner

	// Create stores obj under key if nothing exists there yet and decodes the
	// stored object (with its new resourceVersion) into out when out is not
	// nil. ttl > 0 makes the key expire after ttl seconds. obj must not carry
	// a resourceVersion. Errors: ErrKeyExists, ErrInvalidObj, ErrInvalidArgument.
	Create(ctx context.Context, key string, obj, out runtime.Object, ttl uint64) error

	// Delete removes key and decodes the last state into out. Preconditions
	// and validateDeletion are checked against the current object; on a
	// conflicting concurrent write they are checked again on the fresh state.
	// cachedExistingObject, when non-nil, is tried first instead of a read.
	// Errors: ErrNotFound, ErrConflict (precondition), whatever validateDeletion returns.
	Delete(ctx context.Context, key string, out runtime.Object, preconditions *Preconditions,
		validateDeletion ValidateObjectFunc, cachedExistingObject runtime.Object, opts DeleteOptions) error

	// Watch starts a watch on key (one object) or, with opts.Recursive, on
	// every key under it. See ListOptions for the resource-version rules.
	// The returned watch ends when ctx is cancelled or Stop is called.
	Watch(ctx context.Context, key string, opts ListOptions) (watch.Interface, error)

	// Get decodes the object stored at key into objPtr. With
	// opts.IgnoreNotFound a missing key zeroes objPtr instead of returning
	// ErrNotFound.
	Get(ctx context.Context, key string, opts GetOptions, objPtr runtime.Object) error

	// GetList lists the object at key, or with opts.Recursive every object
	// under key, that matches opts.Predicate into listObj (a pointer to a
	// list type with an Items field, or *unstructured.UnstructuredList).
	// Pagination: opts.Predicate.Limit and opts.Predicate.Continue.
	GetList(ctx context.Context, key string, opts ListOptions, listObj runtime.Object) error

	// GuaranteedUpdate reads key (or uses cachedExistingObject first), calls
	// tryUpdate and writes its result with compare-and-swap, retrying from a
	// fresh read on conflict. A result that encodes to the stored bytes is
	// not written (no new revision). With ignoreNotFound a missing key is
	// passed to tryUpdate as a zero object, so the update may create it.
	// The stored object is decoded into destination. opts says what the
	// caller knows of cachedExistingObject.
	GuaranteedUpdate(ctx context.Context, key string, destination runtime.Object, ignoreNotFound bool,
		preconditions *Preconditions, tryUpdate UpdateFunc, cachedExistingObject runtime.Object, opts UpdateOptions) error

	// Stats reports how many objects the store holds under its prefix.
	Stats(ctx context.Context) (Stats, error)

	// ReadinessCheck returns nil when the store can serve requests, or an
	// error wrapping ErrNotReady.
	ReadinessCheck() error

	// RequestWatchProgress asks etcd to send progress notifications to the
	// watches opened with ProgressNotify, so their RV advances without writes.
	RequestWatchProgress(ctx context.Context) error

	// GetCurrentResourceVersion returns etcd's current revision with a
	// quorum read.
	GetCurrentResourceVersion(ctx context.Context) (uint64, error)

	// CompactRevision returns the newest revision etcd is known to have
	// compacted its history to, whoever compacted it; 0 if none. Watches
	// from an RV below it, exact lists and continue tokens at an RV below it
	// answer 410 Gone.
	CompactRevision() int64
}

// CompactRevisionRefresher is implemented by storages that can ask their
// backend for its compacted revision on demand, for decisions that must not
// rely on knowledge even a second old (the cacher's exact lists, continue
// tokens and watches from an old RV).
type CompactRevisionRefresher interface {
	// RefreshCompactRevision asks the backend now and returns its
	// compacted revision.
	RefreshCompactRevision(ctx context.Context) (int64, error)
}

// GetOptions are the options of Get.
type GetOptions struct {
	// IgnoreNotFound zeroes the object instead of returning ErrNotFound.
	IgnoreNotFound bool
	// ResourceVersion: unset reads the latest state; RVAny lets a cache
	// serve any state; RVAt(N) requires state at least as new as N.
	ResourceVersion RV
}

// ListOptions are the options of GetList and Watch.
type ListOptions struct {
	// ResourceVersion is the RV the request starts from; see the package doc.
	ResourceVersion RV
	// ResourceVersionMatch is "", NotOlderThan or Exact (GetList only).
	ResourceVersionMatch metav1.ResourceVersionMatch
	// Predicate filters objects and carries Limit/Continue for lists and
	// AllowWatchBookmarks for watches.
	Predicate SelectionPredicate
	// Recursive lists or watches every key under the given key.
	Recursive bool
	// ProgressNotify asks the watch to deliver etcd progress notifications as
	// BOOKMARK events (when the predicate allows bookmarks).
	ProgressNotify bool
	// RevisionEndBookmarks asks the watch (when the predicate allows
	// bookmarks) to follow the last event of every revision with a BOOKMARK
	// at that revision annotated with RevisionEndAnnotationKey, so that a
	// consumer can apply a revision as a whole as soon as it has it. A
	// storage may ignore it; consumers must then find revision ends by
	// themselves (the next revision's event, a progress bookmark).
	RevisionEndBookmarks bool
	// SendInitialEvents, when non-nil and true, makes a watch first send an
	// ADDED event for every matching object at its start RV, then a BOOKMARK
	// annotated with InitialEventsAnnotationKey.
	SendInitialEvents *bool
}

// UpdateOptions are the options of GuaranteedUpdate.
type UpdateOptions struct {
	// SuggestionDecoded says that cachedExistingObject is the storage's own
	// decoding of the value it stores at the object's resourceVersion,
	// unchanged since (a copy of what a cache fed by that storage's list and
	// watch holds). Where the storage would decode that same value again to
	// fill the destination (an update that turns out to be a no-op), it may
	// copy the suggestion instead: the copy is what the decoding would give.
	// A storage may ignore it.
	SuggestionDecoded bool
}

// DeleteOptions are the options of Delete.
type DeleteOptions struct {
	// IgnoreStoreReadError deletes an object whose stored bytes cannot be
	// decoded or transformed (corrupt objects) without checking preconditions
	// (validateDeletion is called with a nil object). An object that can be
	// read is not deleted this way: ErrInvalidObj.
	IgnoreStoreReadError bool
	// SuggestionDecoded says that cachedExistingObject is the storage's own
	// decoding of the stored value (see UpdateOptions.SuggestionDecoded):
	// the storage may give a copy of it as the deleted object's last state
	// instead of decoding the value again.
	SuggestionDecoded bool
}

// ResponseMeta describes the stored object passed to an UpdateFunc.
type ResponseMeta struct {
	// TTL is the remaining time to live in seconds, 0 if none.
	TTL int64
	// ResourceVersion is the mod revision of the stored object, 0 if absent.
	ResourceVersion uint64
}

// UpdateFunc computes the next state from the current one. Returning a nil
// ttl keeps the object's current lease; a non-nil ttl sets (or, when 0,
// clears) it. Returning an error aborts the update with that error.
type UpdateFunc func(input runtime.Object, res ResponseMeta) (output runtime.Object, ttl *uint64, err error)

// ValidateObjectFunc validates an object about to be deleted.
type ValidateObjectFunc func(ctx context.Context, obj runtime.Object) error

// ValidateAllObjectFunc accepts every object.
func ValidateAllObjectFunc(ctx context.Context, obj runtime.Object) error { return nil }

// Preconditions must hold on the stored object for an update or delete.
type Preconditions struct {
	// UID, when set, must equal the object's metadata.uid.
	UID *types.UID
	// ResourceVersion, when set, must equal the object's resourceVersion.
	ResourceVersion *string
}

// NewUIDPreconditions returns preconditions requiring the given UID.
func NewUIDPreconditions(uid string) *Preconditions {
	u := types.UID(uid)
	return &Preconditions{UID: &u}
}

// Stats is what Stats reports.
type Stats struct {
	// ObjectCount is the number of keys under the store's prefix.
	ObjectCount int64
}

// EncodedList is a list whose items are encodings, in the format of the
// store that produced it (see EncodedLister).
type EncodedList struct {
	// Items are the encoded objects, in key order; read-only.
	Items [][]byte
	// ResourceVersion is the RV the list was read at.
	ResourceVersion uint64
	// Continue is the token of the next page; "" on the last page.
	Continue string
	// RemainingItemCount is the number of items after this page, when
	// known (lists without a selector).
	RemainingItemCount *int64
}
