package watchcache

import (
	"fmt"
	"testing"
)

// replayAt returns an RV whose state needs a replay of k events from the
// snapshot before it.
func replayAt(b *testing.B, c *Cache, k int) uint64 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for i := 0; i+1 < len(c.snaps.list); i++ {
		from, to := c.ring.firstAfter(c.snaps.list[i].rv), c.ring.firstAfter(c.snaps.list[i+1].rv)
		if to-from > k && from >= 0 && c.snaps.list[i].rv >= c.oldest {
			return c.ring.at(from + k - 1).RV
		}
	}
	b.Fatalf("no gap of %d events between snapshots", k)
	return 0
}

// BenchmarkExactListReplay is the cost of an exact list (all 10,000
// objects, or a page of 500) at an RV that needs a replay of k events
// from the snapshot before it, next to one a snapshot holds as is
// (replay=0), after 100,000 updates. The replayed state is not kept, so
// that every list replays.
func BenchmarkExactListReplay(b *testing.B) {
	c, last := updated(b, func(cfg *Config) { cfg.SpacedSnapshots = true })
	for _, limit := range []int{0, 500} {
		q := ListOptions{Key: "/widgets/", Recursive: true, Limit: limit}
		for _, k := range []int{0, 1, 100} {
			b.Run(fmt.Sprintf("limit=%d/replay=%d", limit, k), func(b *testing.B) {
				rv := last - 10
				if k > 0 {
					rv = replayAt(b, c, k)
				}
				b.ReportAllocs()
				for b.Loop() {
					c.mu.Lock()
					st, at, plan, err := c.stateAtLocked(rv, Exact)
					c.mu.Unlock()
					if err != nil {
						b.Fatal(err)
					}
					if (plan != nil) != (k > 0) || (plan != nil && len(plan.evs) != k) {
						b.Fatalf("list at %d: replay of %v, want %d events", rv, plan, k)
					}
					if plan != nil {
						st, at = plan.run(), rv
					}
					if res := st.page(&q, at); len(res.Items) == 0 {
						b.Fatal("empty list")
					}
				}
			})
		}
	}
}
