// Package watchcache is the in-memory heart of the cacher: a cyclic buffer
// of recent watch events plus the current state of one resource, indexed and
// snapshot-able. It is a plain data structure: no etcd, no goroutines.
//
// Contract:
//
//   - Apply records one event at a revision not older than the cache's RV.
//     Events of one revision (an etcd transaction) are applied one by one
//     with the same RV; the cache keeps them together.
//   - Replace swaps in the result of a relist and resets the history: events
//     at or before the list RV can no longer be replayed.
//   - RV() is the newest revision the cache holds completely: an event of
//     revision r proves every revision before r complete, and UpdateRV (etcd
//     progress notifications) proves its argument complete. Lists at the
//     current state are served at that RV, from the last complete snapshot.
//   - Replays are ignored: events at or below RV(), and a key applied again
//     at the newest revision (a watch resumed in the middle of a revision).
//   - Compact records the storage's compaction: exact lists below it fail as
//     they would in etcd; the event history is kept (see Compacted).
//   - EventsSince(rv, max) returns the events with RV > rv, or a
//     *TooOldError (errors.Is(err, storage.ErrGone)) when some of them have
//     left the buffer.
//   - WaitUntilFresh blocks until the RV reaches a target or ctx ends (then a
//     too-large-resource-version error).
//   - List serves the current state (match NotOlderThan) or the state at an
//     exact RV from copy-on-write B-tree snapshots, so every page of a
//     paginated list is read at one consistent RV. At most MaxSnapshots are
//     kept, one per revision, the oldest dropped first; with SpacedSnapshots
//     the older ones are instead spaced out over the event buffer, an RV
//     between two is rebuilt from the older one and the buffer's events
//     after it (and kept as a snapshot), so every RV the buffer covers is
//     served, for more memory. A page costs O(log n + limit): the count of
//     remaining items (CountRemaining) is taken once per snapshot and
//     prefix and carried from page to page.
//
// Concurrency: every method is safe for concurrent use; a single
// sync.RWMutex guards the cache and no method calls out while holding it,
// except the Filter function of List, which must not call the cache.
// Objects handed out are shared with the cache and must be treated as
// read-only, as Kubernetes' cacher requires of its objects. So must objects
// handed in: Apply and Replace keep them and, in a cache without a Codec,
// first rewrite them in place to take less memory: strings and
// map[string]string values that repeat at the same place across objects
// (namespaces, label sets, node names, images) become one shared copy. No
// one else may read an object handed in before Apply or Replace returns.
//
// Memory: that rewriting and the other memory tricks (packing) live in
// watchcache/internal/pack, whose doc gives the measured gain of each;
// Config.NoPacking turns them all off. "Compact" in this package means
// the storage's compaction only.
//
//	c := watchcache.New(watchcache.Config{KeyFunc: keyOf})
//	_ = c.Replace(objs, 10)
//	ev, _ := c.Apply(watch.Modified, obj, 11)
//	evs, _, err := c.EventsSince(10, 100) // [ev]
package watchcache
