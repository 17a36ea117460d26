package pack

import (
	"hash/maphash"
	"maps"
	"sync"
)

// mapTable shares equal map[string]string values found at one place (a
// field of a type, or the label sets of encoded elements). Go has no
// interning of maps (unique takes comparable values only): a map is found
// by a hash of its content and compared with maps.Equal.
type mapTable struct {
	seed       maphash.Seed
	seen, hits int
	// distinct is set once the place is judged to hold mostly distinct
	// maps: they are no longer looked up.
	distinct bool
	sets     map[uint64][]map[string]string
	n        int
}

// find returns the map equal to m recorded before and true; else false
// and the hash to add m's replacement with, unless the place is judged to
// hold mostly distinct maps (then add is not needed: judging is false).
func (t *mapTable) find(m map[string]string) (shared map[string]string, h uint64, judging bool) {
	if t.distinct || len(m) == 0 {
		return nil, 0, false
	}
	if t.sets == nil {
		t.seed, t.sets = maphash.MakeSeed(), make(map[uint64][]map[string]string)
	}
	t.seen++
	h = t.hash(m)
	for _, s := range t.sets[h] {
		if maps.Equal(s, m) {
			t.hits++
			return s, h, true
		}
	}
	if t.seen >= sampleSize && t.hits*4 < t.seen {
		t.distinct, t.sets, t.n = true, nil, 0
		return nil, 0, false
	}
	if t.seen >= 1<<16 {
		t.seen, t.hits = t.seen/2, t.hits/2
	}
	return nil, h, true
}

// add records m, whose content hashes to h, as the map to share.
func (t *mapTable) add(h uint64, m map[string]string) {
	if t.n >= maxTableEntries {
		t.sets, t.n = make(map[uint64][]map[string]string), 0
	}
	t.sets[h] = append(t.sets[h], m)
	t.n++
}

// hash returns a hash of m's content, independent of iteration order.
func (t *mapTable) hash(m map[string]string) uint64 {
	var h uint64
	for k, v := range m {
		var e maphash.Hash
		e.SetSeed(t.seed)
		e.WriteString(k)
		e.WriteByte(0)
		e.WriteString(v)
		h += e.Sum64()
	}
	return h
}

// syncMaps is a mapTable safe for concurrent use.
type syncMaps struct {
	mu sync.Mutex
	t  mapTable
}

// share returns the map equal to l that was given first (l itself when
// there is none).
func (s *syncMaps) share(l map[string]string) map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	shared, h, judging := s.t.find(l)
	switch {
	case shared != nil:
		return shared
	case judging:
		s.t.add(h, l)
	}
	return l
}
