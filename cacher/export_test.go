package cacher

import (
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
)

// DropEventsForTest makes c skip the events for which drop returns true
// when applying them to its cache, so that the cache diverges from the
// storage; nil stops it.
func DropEventsForTest(c *Cacher, drop func(watch.EventType, runtime.Object) bool) {
	if drop == nil {
		c.f.dropEvent.Store(nil)
		return
	}
	c.f.dropEvent.Store(&drop)
}

// RelistForTest makes c's reflector list again, as a consistency repair or
// a transformer change does.
func RelistForTest(c *Cacher) { c.f.askRelist(errRelist) }

// LiveWatchersForTest is how many watchers are in c's live dispatch.
func LiveWatchersForTest(c *Cacher) int { return c.hub.Live() }

// RevisionWaitersForTest is how many consistent reads and watch starts of
// c wait for a storage read of the current revision that another one
// started.
func RevisionWaitersForTest(c *Cacher) int { return c.f.revisions.waiters() }

// CompactionWaitersForTest is how many reads and watches of c wait for a
// storage read of the compacted revision that another one started.
func CompactionWaitersForTest(c *Cacher) int { return c.f.compactions.waiters() }
