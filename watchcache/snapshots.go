package watchcache

// snapshot is the state as of every RV in [rv, the next snapshot's rv).
type snapshot struct {
	rv uint64
	st *state
}

// snapshots holds past states, oldest first, at most max of them. Not safe
// for concurrent use: Cache guards it.
type snapshots struct {
	list []snapshot
	max  int
}

func (s *snapshots) push(rv uint64, st *state) {
	if n := len(s.list); n > 0 && s.list[n-1].rv == rv {
		s.list[n-1].st = st
		return
	}
	if len(s.list) >= s.max {
		s.dropBefore(1)
	}
	s.list = append(s.list, snapshot{rv: rv, st: st})
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

// trim drops the snapshots whose whole span ends at or before rv.
func (s *snapshots) trim(rv uint64) {
	k := 0
	for k+1 < len(s.list) && s.list[k+1].rv <= rv {
		k++
	}
	s.dropBefore(k)
}

// at returns the state at rv if a snapshot covers it: the newest snapshot
// with snapshot.rv <= rv, provided rv is before end (where the live state
// takes over).
func (s *snapshots) at(rv uint64) (*state, bool) {
	for i := len(s.list) - 1; i >= 0; i-- {
		if s.list[i].rv <= rv {
			return s.list[i].st, true
		}
	}
	return nil, false
}

func (s *snapshots) reset() {
	clear(s.list)
	s.list = s.list[:0]
}

// oldest returns the RV of the oldest snapshot, 0 if none.
func (s *snapshots) oldest() uint64 {
	if len(s.list) == 0 {
		return 0
	}
	return s.list[0].rv
}
