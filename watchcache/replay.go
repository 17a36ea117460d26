package watchcache

import "k8s.io/apimachinery/pkg/watch"

// replay rebuilds the state at rv from an older snapshot and the events
// after it, which the ring holds all of.
type replay struct {
	rv uint64
	// until is the RV of the first change after rv.
	until uint64
	// from is a clone of the snapshot's state, written only by run.
	from *state
	evs  []*Event
	// seq is the cache's event count up to rv.
	seq uint64
	// gen is the snapshots' generation the plan was made in.
	gen uint64
}

// replayPlanLocked plans the state at rv (not held by any snapshot): a
// clone of the newest snapshot before rv and the events in (snapshot, rv].
// It reports false when the ring no longer holds all of them.
func (c *Cache) replayPlanLocked(rv uint64) (*replay, bool) {
	b, ok := c.snaps.base(rv)
	if !ok || b.rv < c.oldest {
		return nil, false
	}
	i, j := c.ring.firstAfter(b.rv), c.ring.firstAfter(rv)
	p := &replay{rv: rv, until: c.liveFrom, seq: b.seq + uint64(j-i), from: b.st.clone(), evs: make([]*Event, j-i), gen: c.snaps.gen}
	for k := range p.evs {
		p.evs[k] = c.ring.at(i + k)
	}
	if j < c.ring.n {
		p.until = c.ring.at(j).RV
	}
	return p, true
}

// run applies the plan's events to its state, as Apply did to the live
// state, and returns the state at the plan's RV. It needs no lock: the
// clone is the plan's own, the events and their elements are immutable.
func (p *replay) run() *state {
	st := p.from
	for _, e := range p.evs {
		if e.Type == watch.Deleted {
			st.remove(e.Key())
		} else {
			st.put(e.Cur)
		}
	}
	return st
}

// keepReplayedLocked records the state a replay built as a snapshot, so
// later lists at that RV (such as the next pages of a list) find it, unless
// the snapshots were reset or compacted past it, or another list kept the
// same state first, meanwhile.
func (c *Cache) keepReplayedLocked(p *replay, st *state) {
	if p.gen != c.snaps.gen || p.rv < c.compacted || p.rv >= c.liveFrom {
		return
	}
	if _, ok := c.snaps.at(p.rv); ok {
		return
	}
	c.snaps.insert(snapshot{rv: p.rv, until: p.until, seq: p.seq, st: st}, c.oldest)
}
