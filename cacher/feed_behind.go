package cacher

import (
	"context"
	"errors"

	"github.com/listwatch/listwatch/watchcache"
	"k8s.io/apimachinery/pkg/runtime"
)

// One catch-up for the watchers that fell behind. A watcher that lagged
// (a slow client) until its position left the cache's history cannot
// replay from the cache; rather than one storage watch each, the first of
// them starts a shared read from the oldest position among the watchers
// out of live dispatch (from; they lag at different positions, and the
// first to ask need not be the furthest behind) up to the cache's current
// revision (until): the state at from, listed at that exact
// revision in pages, and the storage's history after it, read through one
// storage watch (feedGap), both applied to a cache of their own. Later
// watchers whose position is within [from, until) replay it too, filtered
// by their own predicates as live events are, and then move on to the
// cache. A watcher it cannot serve (further behind, or the storage no
// longer holds the history) catches up through its own storage watch as
// before.

// maxBehindReads bounds the shared reads for fallen-behind watchers in
// flight: beyond it, watchers catch up one by one.
const maxBehindReads = 2

// maxBehindEvents bounds the history a shared read keeps: a watcher whose
// part of it was dropped catches up through its own storage watch.
const maxBehindEvents = 100_000

// behindGap returns the shared read that can replay the events after pos
// for a watcher that fell out of the cache's history, starting one if
// none can; nil when none can be (the cache cannot take over after it, a
// read failed recently, or too many are in flight). A read it starts
// begins at the oldest position among the watchers out of live dispatch
// (see hub.oldestLagging), not at pos: watchers lag at different
// positions, and the first to ask is not always the furthest behind.
func (c *Cacher) behindGap(pos uint64) *gapHistory {
	if g, ok := c.offeredBehind(pos); ok {
		return g
	}
	// The hub's lock is not taken under behindMu: read the positions first.
	until := c.cacheRV()
	floor := max(c.cache.Compacted(), 1)
	if until > maxBehindEvents {
		floor = max(floor, until-maxBehindEvents)
	}
	from := pos
	if oldest, ok := c.hub.oldestLagging(floor); ok {
		from = min(from, oldest)
	}
	c.behindMu.Lock()
	if g, ok := c.offeredBehindLocked(pos); ok {
		c.behindMu.Unlock()
		return g
	}
	until = c.cacheRV()
	if c.behindReads >= maxBehindReads || !c.cacheHolds(until) || pos == 0 || pos >= until || pos < c.cache.Compacted() {
		c.behindMu.Unlock()
		return nil
	}
	from = max(from, c.cache.Compacted())
	cfg := c.cfg.cacheConfig()
	cfg.MinCapacity = int(min(until-from+1, maxBehindEvents))
	cfg.MaxCapacity, cfg.MaxSnapshots, cfg.Window = maxBehindEvents, 1, gapTimeout+gapRetention
	cache, err := watchcache.New(cfg)
	if err != nil {
		c.behindMu.Unlock()
		c.log.Warn("cacher: no shared catch-up for watchers that fell behind", "prefix", c.prefix, "err", err)
		return nil
	}
	g := &gapHistory{cache: cache, from: from, until: until}
	c.behind = g
	c.behindReads++
	c.behindMu.Unlock()
	if !c.startBehind(g) {
		return nil
	}
	return g
}

// offeredBehind returns the offered shared read if it can serve pos (ok,
// g) or it failed recently (ok, nil: do not hammer the storage); !ok when
// a read must be started.
func (c *Cacher) offeredBehind(pos uint64) (*gapHistory, bool) {
	c.behindMu.Lock()
	defer c.behindMu.Unlock()
	return c.offeredBehindLocked(pos)
}

// offeredBehindLocked is offeredBehind with behindMu held.
func (c *Cacher) offeredBehindLocked(pos uint64) (*gapHistory, bool) {
	g := c.behind
	switch {
	case g == nil:
		return nil, false
	case g.failed.Load():
		return nil, true
	case g.covers(pos):
		return g, true
	}
	return nil, false
}

// startBehind starts reading the state at g.from and the history after
// it into g; false if the cacher is stopping.
func (c *Cacher) startBehind(g *gapHistory) bool {
	c.runMu.Lock()
	defer c.runMu.Unlock()
	if c.stopped || c.runCtx == nil || c.runCtx.Err() != nil {
		g.fail()
		c.endBehind(g, true)
		c.endBehind(g, false)
		return false
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		ctx, cancel := context.WithTimeout(c.runCtx, gapTimeout)
		err := c.listBehind(ctx, g)
		cancel()
		if err == nil {
			err = c.feedGap(c.runCtx, g)
		}
		if err != nil {
			g.fail()
			if c.runCtx.Err() == nil {
				c.log.Warn("cacher: the shared catch-up read of fallen-behind watchers failed; they catch up one by one",
					"prefix", c.prefix, "from", g.from, "until", g.until, "err", err)
			}
		}
		c.endBehind(g, true)
		t := c.clk.sched.NewTimer(gapRetention)
		defer t.Stop()
		select {
		case <-c.runCtx.Done():
		case <-t.C():
		}
		c.endBehind(g, false)
	}()
	return true
}

// endBehind records that g's read ended (read) or, after its retention,
// stops offering it.
func (c *Cacher) endBehind(g *gapHistory, read bool) {
	c.behindMu.Lock()
	defer c.behindMu.Unlock()
	switch {
	case read:
		c.behindReads--
	case c.behind == g:
		c.behind = nil
	}
}

// listBehind fills g's cache with the state at g.from, read in pages.
func (c *Cacher) listBehind(ctx context.Context, g *gapHistory) error {
	var objs []runtime.Object
	start := c.prefix
	for {
		items, next, rv, err := c.listPage(ctx, start, g.from, int64(c.cfg.ListPageSize))
		if err != nil {
			return err
		}
		if rv != g.from {
			return errors.New("the list did not answer at the revision asked")
		}
		objs = append(objs, items...)
		if next == "" {
			return g.cache.Replace(objs, g.from)
		}
		start = next
	}
}
