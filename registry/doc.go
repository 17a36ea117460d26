// Package registry is the write path of Kubernetes' object metadata over
// any storage.Interface (an etcd3 store, a cacher): what kube-apiserver's
// generic registry does between a request and storage, for in-process
// callers and for package server alike.
//
// A Store applies these rules:
//
//   - Create: the object must not carry a resourceVersion (400 Bad
//     Request); it gets a new metadata.uid, creationTimestamp (now, UTC, in
//     seconds), generation 1; deletionTimestamp,
//     deletionGracePeriodSeconds and selfLink are cleared.
//   - Update: a resourceVersion in the new object must equal the stored
//     one (409 Conflict), as must a uid; without a resourceVersion the
//     update is unconditional. uid, creationTimestamp, deletionTimestamp
//     and deletionGracePeriodSeconds are carried over from the stored
//     object whatever the new one says; generation is the stored one, plus
//     one when anything outside metadata and status (and apiVersion, kind)
//     changed. An object being deleted may not gain finalizers (422
//     Invalid). Removing the last finalizer of an object being deleted
//     deletes it.
//   - Delete: an object without finalizers is deleted. An object with
//     finalizers gets deletionTimestamp (now) and
//     deletionGracePeriodSeconds 0 and stays until an update removes its
//     last finalizer; deleting it again changes nothing.
//
// Errors are apimachinery's StatusErrors for the rules above (use
// apierrors.IsConflict, IsInvalid, IsBadRequest) and the storage's own
// errors (storage.IsCode) for everything the storage refuses. Keys are the
// storage's keys, built by the caller (for example widget.Key).
//
// Not done here: generateName (the caller names the object), admission,
// field validation, managedFields and garbage collection: a
// propagationPolicy adds no orphan or foregroundDeletion finalizer, and
// dependents are not deleted.
package registry
