package client

import (
	"context"
)

// Reader reads objects.
type Reader interface {
	// Get reads the object named key into obj, whose Go type (or, for an
	// unstructured object, apiVersion and kind) says its kind. A missing
	// object is a not-found error (IsNotFound).
	Get(ctx context.Context, key ObjectKey, obj Object, opts ...GetOption) error
	// List reads the objects of list's kind (list's Go type, or an
	// unstructured list's apiVersion and kind) into list, filtered and
	// paged by opts (InNamespace, MatchingLabels, MatchingFields, Limit,
	// Continue).
	List(ctx context.Context, list ObjectList, opts ...ListOption) error
}

// Writer writes objects. Every write decodes the stored object back into
// obj (with its new resourceVersion, uid, generation, ...).
type Writer interface {
	// Create stores obj, a new object. With metadata.generateName and no
	// name, a unique name is made from the prefix. An existing object is
	// an already-exists error (IsAlreadyExists).
	Create(ctx context.Context, obj Object, opts ...CreateOption) error
	// Update replaces the stored object with obj. A resourceVersion in obj
	// must match the stored one (IsConflict otherwise); status is kept as
	// stored (write it with Status().Update) — over HTTP, when the server
	// serves the kind's /status subresource, as Kubernetes does.
	Update(ctx context.Context, obj Object, opts ...UpdateOption) error
	// Patch applies patch to the stored object named by obj and decodes the
	// result into obj (status is kept as stored; patch it with
	// Status().Patch).
	Patch(ctx context.Context, obj Object, patch Patch, opts ...PatchOption) error
	// Delete deletes the object named by obj (or marks it as being deleted
	// when it has finalizers). Preconditions (UID, resourceVersion) must
	// hold (IsConflict otherwise).
	Delete(ctx context.Context, obj Object, opts ...DeleteOption) error
	// DeleteAllOf deletes every object of obj's kind matching opts (a
	// namespace, label and field selectors).
	DeleteAllOf(ctx context.Context, obj Object, opts ...DeleteAllOfOption) error
}

// StatusWriter writes the status subresource: only the object's status
// changes (and the rest of obj is replaced by the stored object). Over
// HTTP the server must serve the kind's /status (404 otherwise).
type StatusWriter interface {
	// Update replaces the stored object's status with obj's.
	Update(ctx context.Context, obj Object, opts ...UpdateOption) error
	// Patch applies patch to the stored object and keeps only the status
	// change.
	Patch(ctx context.Context, obj Object, patch Patch, opts ...PatchOption) error
}

// Client reads and writes objects of the kinds its Kinds know.
// Implementations: NewLocal (in process), NewHTTP (over HTTP) and
// WithCache (reads from informer caches). All are safe for concurrent use.
type Client interface {
	Reader
	Writer
	// Status returns the writer of the status subresource.
	Status() StatusWriter
	// Kinds returns the registry of kinds the client resolves objects with.
	Kinds() *Kinds
}
