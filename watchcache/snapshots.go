package watchcache

import (
	"cmp"
	"math"
	"slices"
)

// openEnd is the until of a snapshot whose next change has not arrived yet.
const openEnd = math.MaxUint64

// snapshot is the state as of every RV in [rv, until): until is the RV of
// the first change after rv (openEnd while unknown). Later RVs up to the
// next retained snapshot are reached by replaying the ring's events on a
// clone of st (see Cache.stateAt).
type snapshot struct {
	rv, until uint64
	// seq is the number of events the cache had recorded up to rv: the
	// difference of two is the number of events a replay between them
	// applies.
	seq uint64
	st  *state
}

// snapshots holds past states, oldest first, at most max of them. When
// full it drops the oldest, or when spaced thins out the older ones, so
// the retained states span the ring's history: the newest quarter stays
// dense and the rest is spaced evenly in events. Not safe for concurrent
// use: Cache guards it.
type snapshots struct {
	list   []snapshot
	max    int
	spaced bool
	// gen changes on every reset: a state built from the snapshots of one
	// generation is not inserted into the next.
	gen uint64
}

// push appends sn, the newest state. oldest is the lowest RV after which
// the ring holds every event.
func (s *snapshots) push(sn snapshot, oldest uint64) {
	if n := len(s.list); n > 0 && s.list[n-1].rv == sn.rv {
		s.list[n-1] = sn
		return
	}
	if len(s.list) >= s.max {
		s.makeRoom(oldest)
	}
	s.list = append(s.list, sn)
}

// insert adds sn in RV order; its RV must be below the newest snapshot's
// and not covered by any snapshot.
func (s *snapshots) insert(sn snapshot, oldest uint64) {
	if len(s.list) >= s.max {
		s.makeRoom(oldest)
	}
	i, _ := slices.BinarySearchFunc(s.list, sn.rv, cmpRV)
	s.list = slices.Insert(s.list, i, sn)
}

// makeRoom removes at least one snapshot: the oldest, or when spaced the
// ones thin picks.
func (s *snapshots) makeRoom(oldest uint64) {
	if !s.spaced {
		s.dropBefore(1)
		return
	}
	s.thin(oldest)
}

// endNewest records that the newest snapshot stands until until (the RV of
// the change after it, which has just arrived).
func (s *snapshots) endNewest(until uint64) {
	if n := len(s.list); n > 0 {
		s.list[n-1].until = until
	}
}

// thin removes about an eighth of the snapshots (at least one): the ones
// whose removal leaves the smallest gap, in events, between their
// neighbours. The newest quarter is kept, and so is the oldest while it
// is after oldest (a base for replays); with too few snapshots to choose
// from, it drops the oldest.
func (s *snapshots) thin(oldest uint64) {
	tail := max(1, s.max/4)
	n := len(s.list)
	if n-tail <= 1 {
		s.dropBefore(1)
		return
	}
	cand := make([]int, 0, n-tail)
	if s.list[0].rv < oldest {
		// Not a base for replays any more (the ring lost events after
		// it): it serves only RVs the ring does not cover.
		cand = append(cand, 0)
	}
	for i := 1; i < n-tail; i++ {
		cand = append(cand, i)
	}
	gap := func(i int) uint64 {
		if i == 0 {
			return 0
		}
		return s.list[i+1].seq - s.list[i-1].seq
	}
	slices.SortStableFunc(cand, func(a, b int) int { return cmp.Compare(gap(a), gap(b)) })
	drop := make([]bool, n)
	want, dropped := max(1, s.max/8), 0
	for _, i := range cand {
		if dropped == want {
			break
		}
		if (i > 0 && drop[i-1]) || drop[i+1] {
			continue // the neighbour's gap no longer is what was sorted
		}
		drop[i] = true
		dropped++
	}
	k := 0
	for i, sn := range s.list {
		if !drop[i] {
			s.list[k] = sn
			k++
		}
	}
	clear(s.list[k:])
	s.list = s.list[:k]
}

// dropBefore removes the k oldest snapshots.
func (s *snapshots) dropBefore(k int) {
	k = min(k, len(s.list))
	clear(s.list[:k])
	s.list = s.list[k:]
	if cap(s.list) > 2*s.max {
		s.list = append(make([]snapshot, 0, s.max), s.list...)
	}
}

// trim drops the snapshots no RV at or after rv needs: those before the
// newest snapshot at or before rv.
func (s *snapshots) trim(rv uint64) {
	k := 0
	for k+1 < len(s.list) && s.list[k+1].rv <= rv {
		k++
	}
	s.dropBefore(k)
}

// base returns the newest snapshot with snapshot.rv <= rv.
func (s *snapshots) base(rv uint64) (snapshot, bool) {
	i, found := slices.BinarySearchFunc(s.list, rv, cmpRV)
	if !found {
		i-- // i is the first snapshot after rv
	}
	if i < 0 {
		return snapshot{}, false
	}
	return s.list[i], true
}

// at returns the state at rv if a snapshot holds it as is.
func (s *snapshots) at(rv uint64) (*state, bool) {
	if b, ok := s.base(rv); ok && rv < b.until {
		return b.st, true
	}
	return nil, false
}

func (s *snapshots) reset() {
	clear(s.list)
	s.list = s.list[:0]
	s.gen++
}

// oldest returns the RV of the oldest snapshot, 0 if none.
func (s *snapshots) oldest() uint64 {
	if len(s.list) == 0 {
		return 0
	}
	return s.list[0].rv
}

// cmpRV orders a snapshot against an RV.
func cmpRV(x snapshot, rv uint64) int {
	switch {
	case x.rv < rv:
		return -1
	case x.rv > rv:
		return 1
	}
	return 0
}
