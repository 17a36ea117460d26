// Package reflector is the client half of List-Watch: a Reflector that lists
// and watches any ListerWatcher, a DeltaFIFO, a thread-safe indexed Store,
// SharedIndexInformers with per-handler buffering, and an informer factory.
// Workqueues and controllers live in reflector/workqueue and
// reflector/controller; the HTTP ListerWatcher in reflector/httplw.
//
// Everything is generic over the object type T (constraint Object: a
// runtime.Object with metav1.Object metadata, e.g. *widget.Widget or
// *unstructured.Unstructured); handlers receive T, never interface{}, and
// "deleted, final state unknown" is a flag on OnDelete, not a wrapper type.
//
// # Pipeline
//
//	ListerWatcher → Reflector → DeltaFIFO → SharedIndexInformer ─┬→ Indexer (updated first)
//	                                                              └→ listener per handler (unbounded ring) → handler
//
// # Reflector contract
//
//   - The first list asks for RV "0" (a cache may answer); later lists ask
//     for the last synced RV, so the state never goes back in time; RV ""
//     (a consistent read) only after a list at that RV failed with 410
//     Expired or "too large resource version".
//   - Lists are paginated (500 per page) when at RV "" or "0"; a continue
//     token that expires (410) falls back to one full list.
//   - The watch starts at the last synced RV with bookmarks allowed and a
//     random timeout in [MinWatchTimeout, 2·MinWatchTimeout). A watch that
//     ends normally is reopened without relisting (after a backoff if it
//     ended at once without any event); 429, 503, timeouts and
//     refused connections back off (exponential with full jitter, reset after a
//     quiet period) and re-watch; 410 and other errors relist.
//   - During the unordered initial ADDED events of a watch from "" or "0",
//     the RV does not advance.
//   - Watch-list mode streams the initial state (sendInitialEvents) into a
//     temporary store until the k8s.io/initial-events-end bookmark, applies
//     it with one Replace and keeps the stream; on failure it lists.
//   - Relist (asked for by a reader that needs the current revision and
//     gets no bookmark saying it has it) ends the watch and lists with a
//     consistent read.
//   - Errors are classified with k8s.io/apimachinery/pkg/api/errors, never
//     by message text, and all go to the WatchErrorHandler.
//
// # Informer contract
//
// See SharedIndexInformer. In short: the store is updated before handlers
// run; each handler has its own goroutine and unbounded buffer (Pending
// reports its depth), so a slow handler only delays itself; a handler added
// late is replayed the store as OnAdd(obj, true) with no event lost or
// repeated; HasSynced (informer and per registration) turns true only
// once the initial list has been processed; StoreResourceVersion is the
// RV the store has applied everything up to (LastSyncResourceVersion what
// the reflector received); a handler panic is recovered and reported; Run
// returns only after all its goroutines ended.
//
// # Example
//
// Informers are made in one place, one per resource: a manager's cache
// (manager.Manager.GetCache; controllers get theirs from package builder),
// or without a manager an InformerFactory:
//
//	factory := reflector.NewInformerFactory()
//	lw := reflector.NewStorageListerWatcher(store, widget.KeyRoot, widget.NewList, "")
//	inf, _ := reflector.InformerFor[*widget.Widget](factory, widget.Resource, lw)
//	reg, _ := inf.AddEventHandler(reflector.ResourceEventHandlerFuncs[*widget.Widget]{
//		AddFunc: func(w *widget.Widget, initial bool) { ... },
//	})
//	factory.Start(ctx)
//	defer factory.Shutdown()
//	reflector.WaitForCacheSync(ctx, reg.HasSynced)
package reflector
