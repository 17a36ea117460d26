// Package gc is a garbage collector over ownerReferences, for the kinds a
// manager serves: it finishes the deletes that the registry begins with a
// propagation policy (registry.DeleteOptions.PropagationPolicy, a
// DeleteOptions body or ?propagationPolicy= over HTTP, kubectl's
// --cascade).
//
//   - Background (the default): the owner goes at once; the collector then
//     deletes every dependent whose owners are all gone (an owner of
//     another UID under the same name is gone: it was deleted and
//     recreated). A dependent with an owner still present loses only the
//     references to the gone ones.
//   - Foreground: the registry keeps the owner, marked for deletion, with
//     the foregroundDeletion finalizer; the collector deletes its
//     dependents (in the foreground too, so a chain goes from the leaves
//     up), waits until those that reference it with blockOwnerDeletion
//     are gone, then removes the finalizer, and the owner goes.
//   - Orphan: the registry keeps the owner with the orphan finalizer; the
//     collector removes the owner's reference from every dependent, then
//     the finalizer.
//
// An owner of a kind the collector does not serve is taken as present: a
// dependent is never collected on the word of a kind it cannot look up.
// Before acting on a dependent, the collector looks its owners up live,
// through the client, when its cache does not hold them with the
// reference's UID: a cache may not yet have seen an owner created a
// moment ago. It deletes a dependent only as it read it (uid and
// resourceVersion preconditions), and before it removes an owner's
// finalizer it lists that owner's dependents from storage too: the
// informer of a dependent's kind may lag the owner's.
//
// The Collector is one controller per kind (named
// garbagecollector-<resource>), each over the kind's informer of a
// cache.Cache, woken by its own objects and by the deletions of their
// owners and dependents of every kind; dependents are found through an
// index of each informer by owner UID. It is a leader-only Runnable;
// manager.Options.GarbageCollector runs one over the manager's kinds.
//
// Decide, Blocking and RefersTo are its pure logic. The semantics are
// Kubernetes' (pkg/controller/garbagecollector); the code is this
// project's own.
package gc
