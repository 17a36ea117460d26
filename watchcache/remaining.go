package watchcache

import "sync"

// maxRemainingMemo bounds the remaining-count memo of one snapshot.
const maxRemainingMemo = 64

// remainingMemo remembers, for a frozen state, how many elements a
// recursive list of a prefix has from a start key on. A paginated list asks
// for the count after every page (RemainingItemCount); counting means
// walking the rest of the tree, so without the memo a walk of N objects in
// pages of L costs O(N²/L). With it, the first page counts once and every
// later page, which starts where the previous one ended, subtracts its own
// length: O(log n + limit) per page.
//
// Only frozen states (clones, never written again) carry a memo, so a
// count can never go stale.
type remainingMemo struct {
	mu sync.Mutex
	m  map[remainingKey]int
}

type remainingKey struct{ prefix, start string }

func (m *remainingMemo) get(prefix, start string) (int, bool) {
	if m == nil {
		return 0, false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n, ok := m.m[remainingKey{prefix, start}]
	return n, ok
}

func (m *remainingMemo) put(prefix, start string, n int) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.m == nil || len(m.m) >= maxRemainingMemo {
		m.m = make(map[remainingKey]int)
	}
	m.m[remainingKey{prefix, start}] = n
}
