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
//   - Delete: DeleteOptions.PropagationPolicy first sets the garbage
//     collector's finalizers as kube-apiserver does: Foreground adds
//     foregroundDeletion, Orphan adds orphan, Background removes both, no
//     policy keeps the one the object has (the default, for every
//     resource, is Background). An object then without finalizers is
//     deleted. An object with finalizers gets them, deletionTimestamp
//     (now), deletionGracePeriodSeconds 0 and, when first marked, its
//     generation plus one (as kube-apiserver bumps it), and stays until an
//     update removes its last finalizer. Deleting it again may switch its
//     garbage collector finalizer, or with Background remove it (and then
//     delete the object if it was the last); otherwise it changes nothing.
//
// Errors are apimachinery's StatusErrors for the rules above (use
// apierrors.IsConflict, IsInvalid, IsBadRequest) and the storage's own
// errors (storage.IsCode) for everything the storage refuses. Keys are the
// storage's keys, built by the caller (for example widget.Key).
//
// Not done here: generateName (the caller names the object), admission,
// field validation, managedFields and garbage collection itself: the
// orphan and foregroundDeletion finalizers wait for a collector (such as
// the one of examples/cluster) to orphan or delete the dependents and
// remove them; without one the object stays marked, as it does in a
// Kubernetes cluster whose garbage collector is not running.
package registry
