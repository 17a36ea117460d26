// Package cacher serves storage.Interface from memory: a watchcache of one
// resource prefix, fed by a single etcd watch through the storage.Interface
// it wraps (normally the etcd3 store), with reads and watches answered from
// the cache and writes passed through.
//
// Contract (see DESIGN.md for the six watch guarantees):
//
//   - Run(ctx) lists the resource, watches it from the list RV with progress
//     notifications, resumes a broken watch from the last RV and relists only
//     when that RV was compacted. It owns every goroutine the cacher starts
//     (reflector, progress requester, bookmark timer, one per watcher) and
//     returns after all of them have exited; every watch's result channel is
//     closed by then.
//
//   - Reads: RV "0" and NotOlderThan from memory (waiting, bounded, for the
//     cache to reach the RV); Exact and continue tokens from snapshots, or
//     from the storage when the cache no longer holds the RV; RV "" is a
//     consistent read from the cache (storage's current revision, then a
//     bounded wait), falling back to the storage on timeout.
//
//   - Watch: from any RV the cache's history holds; older RVs are caught up
//     from the storage's (etcd's) history through a bounded number of
//     concurrent streams, then continue from the cache with no gap and no
//     duplicate. A watch ends with a 410 error event only when etcd has
//     compacted what it still needs. A slow watcher is never blocked on and
//     never killed: when its buffer is full it leaves live dispatch, catches
//     up from history at its own pace and rejoins.
//
//   - Compaction: the storage's CompactRevision reports etcd's compactions,
//     whoever made them; before an exact list, a continue token or a watch
//     from an RV older than the cache's newest is served from memory, the
//     cacher asks the storage (storage.CompactRevisionRefresher), so 410
//     means exactly that etcd compacted the RV, on every replica alike.
//
//   - Positions: the cache's RV is the newest revision it holds completely;
//     bookmarks and list RVs use it. With a storage that marks revision
//     ends (the etcd3 store, see storage.ListOptions.RevisionEndBookmarks) a
//     revision is applied, made the cache's RV and dispatched at once, so a
//     read at RV "0" is never older than an event a watcher already has.
//
//   - Recovery: a storage watch that keeps failing without progress (an
//     undecodable value) for WatchRecoveryTimeout ends every watch with an
//     error event and re-initialises the cache from a fresh list; reads go
//     to the storage meanwhile.
//
//   - Deadline bookmarks: a watch that allows bookmarks and has a deadline
//     gets a bookmark shortly before it.
//
// Objects returned by reads and watches may be shared with the cache and
// with other watchers: treat them as read-only.
//
//	c, err := cacher.New(cacher.Config{Storage: store, ResourcePrefix: "/widgets",
//		NewFunc: testapi.NewWidget, NewListFunc: testapi.NewWidgetList})
//	go c.Run(ctx)
//	_ = c.WaitReady(ctx)
//	w, _ := c.Watch(ctx, "/widgets/ns1", storage.ListOptions{ResourceVersion: rv, Recursive: true})
package cacher
