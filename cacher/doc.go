// Package cacher serves storage.Interface from memory: a watchcache of one
// resource prefix, fed by a single etcd watch through the storage.Interface
// it wraps (normally the etcd3 store), with reads and watches answered from
// the cache and writes passed through.
//
// Contract (see docs/design.md for the six watch guarantees):
//
//   - Run(ctx) lists the resource (in pages of ListPageSize keys at one
//     revision), watches it from the list RV with progress notifications,
//     resumes a broken watch from the last RV and relists only when that RV
//     was compacted (or a repair asks for it). A watcher replays one
//     history (internal/history): the cache's ring, or, where the ring
//     cannot serve it (a relist left it behind, it fell out of the ring,
//     it starts from an older RV, the cache is being re-initialised), a
//     shared read of etcd's history, one storage stream for the watchers
//     that need the same revisions of the same scope, reference-counted
//     (feed_history.go). It owns every
//     goroutine the cacher starts (reflector, progress requester, bookmark
//     timer, shared reads, one per watcher) and
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
//     shared reads, then continue from the cache with no gap and no
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
//     undecodable value) for WatchRecoveryTimeout makes the cache untrusted
//     (reads go to the storage) and relists after the failing revision,
//     around the value: the watches whose scope held it end with an error
//     event, the others go on. A list that fails on unreadable data while
//     the cache is ready ends every watch and re-initialises the cache.
//
//   - Corrupt objects (feed_corrupt.go): a value the storage cannot decode does
//     not keep the cache from loading. The list reads around it and the
//     cache remembers its key; lists, Gets and watches with initial events
//     whose scope holds it are answered by the storage, which names every
//     corrupt key (500 StoreReadError, one cause per key, as Kubernetes'
//     aggregated list error). Naming was chosen over serving without them
//     with a warning: a list that silently lacks an object tells informers
//     it was deleted. No watch gets an event for an object the cache could
//     not decode. After the unsafe delete
//     (storage.DeleteOptions.IgnoreStoreReadError) the storage's watch
//     reports a StoreReadError, and the cacher relists at once; watches
//     whose scope held the key end with that error.
//
//   - Consistency check (feed_consistency.go): on a divergence the cache is
//     untrusted (reads and new watches go to the storage) until the relist
//     it asks for has landed, and every watch whose scope diverged ends,
//     catching up or live; no check runs while that relist is pending. A
//     difference a relist did not remove is reported once, not relisted.
//
//   - Bookmarks: a watch that allows them gets one about every
//     BookmarkInterval, at its own step of the interval (spread across
//     watchers), one shortly before its deadline, and the initial-events-end
//     one; storage progress notifications only when it set ProgressNotify.
//
// Layout, by owner: the feed (the feed type, feed*.go: list, watch,
// revisions, recovery, revalidation, consistency check, the shared reads
// of history) is the only writer of the cache; the hub (package
// internal/hub: the registry of live watchers and its shard index, the
// log of published changes the live watchers read from, lagging and
// waking, bookmarks) owns live dispatch and
// is the only holder of its lock, which the feed enters through
// Hub.Commit; a watcher (package internal/watcher) is a delivery state
// machine that reads history through a watcher.Source and joins live
// dispatch through the hub, knowing nothing else of the Cacher; package
// internal/history holds the history a watcher replays (History: the ring
// or a shared read of the storage's) and the one revision type. Cacher (cacher.go, route.go,
// reads.go, watch.go) wires them and serves storage.Interface; route.go
// alone decides who answers a read. Every timer and time read goes through
// the clocks of clock.go.
//
// Objects returned by reads and watches may be shared with the cache and
// with other watchers: treat them as read-only.
//
//	c, err := cacher.New(cacher.Config{Storage: store, ResourcePrefix: "/widgets",
//		NewFunc: widget.New, NewListFunc: widget.NewList})
//	go c.Run(ctx)
//	_ = c.WaitReady(ctx)
//	w, _ := c.Watch(ctx, "/widgets/ns1", storage.ListOptions{ResourceVersion: storage.RVAt(rv), Recursive: true})
package cacher
