package watchcache

import (
	"fmt"
	"strings"

	"github.com/listwatch/listwatch/storage"
)

// Match says how List interprets its RV.
type Match int

const (
	// NotOlderThan serves the current state, which must be at least RV.
	NotOlderThan Match = iota
	// Exact serves the state at exactly RV, from a snapshot (with
	// SpacedSnapshots, rebuilt from an older one and the event history
	// when needed).
	Exact
)

// IndexValue restricts a list to elements whose index Name has Value.
type IndexValue struct {
	// Name is LabelIndex(l) or FieldIndex(f) of a configured index.
	Name string
	// Value is the required value.
	Value string
}

// ListOptions selects what List returns.
type ListOptions struct {
	// Key is the key (Recursive false) or the key prefix (Recursive true).
	Key string
	// Recursive lists every key with prefix Key.
	Recursive bool
	// StartKey is the first key to consider (inclusive); "" starts at Key.
	StartKey string
	// Limit caps the number of items; 0 means no limit.
	Limit int
	// Filter, when set, keeps only the elements it accepts. It runs without
	// the cache's lock and must not call the cache.
	Filter func(*Element) bool
	// Index, when set and configured, visits only elements with that index
	// value (Filter still applies).
	Index *IndexValue
	// CountRemaining makes List count the items after a full page.
	CountRemaining bool
}

// ListResult is a page of a list.
type ListResult struct {
	// Items are in key order.
	Items []*Element
	// RV is the RV the page was read at.
	RV uint64
	// More is true when Limit stopped the page early; NextKey is then the
	// key to pass as StartKey for the next page.
	More    bool
	NextKey string
	// Remaining is the number of items after the page (CountRemaining only).
	Remaining int64
}

// List returns the elements selected by opts at rv. With NotOlderThan the
// cache must already be at rv or newer (see WaitUntilFresh), otherwise the
// error is too-large-RV; rv 0 means any. With Exact, rv must be covered by a
// snapshot, the live state, or a snapshot before it and the ring's events
// after that snapshot, otherwise the error is a *TooOldError.
func (c *Cache) List(rv uint64, match Match, opts ListOptions) (ListResult, error) {
	st, at, err := c.stateAt(rv, match)
	if err != nil {
		return ListResult{}, err
	}
	return st.page(&opts, at), nil
}

// Get returns the current element at key and the cache's RV.
func (c *Cache) Get(key string) (*Element, uint64, bool, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if !c.ready {
		return nil, 0, false, storage.ErrNotReady
	}
	el, ok := c.live.get(key)
	return el, c.rv, ok, nil
}

// stateAt returns an immutable state for rv and the RV it stands for. An
// exact rv between two snapshots is rebuilt from the older one and the
// ring's events after it (see replay).
func (c *Cache) stateAt(rv uint64, match Match) (*state, uint64, error) {
	c.mu.Lock()
	st, at, plan, err := c.stateAtLocked(rv, match)
	c.mu.Unlock()
	if err != nil || plan == nil {
		return st, at, err
	}
	st = plan.run()
	c.mu.Lock()
	c.keepReplayedLocked(plan, st)
	c.mu.Unlock()
	return st, rv, nil
}

// stateAtLocked returns the state for rv, or the plan to rebuild it.
func (c *Cache) stateAtLocked(rv uint64, match Match) (*state, uint64, *replay, error) {
	if !c.ready {
		return nil, 0, nil, storage.ErrNotReady
	}
	if rv > c.rv {
		return nil, 0, nil, storage.NewTooLargeResourceVersionError(rv, c.rv, 1)
	}
	if match == Exact && rv < c.compacted {
		return nil, 0, nil, &TooOldError{Requested: rv, Oldest: c.compacted}
	}
	if match == NotOlderThan && c.liveFrom > c.rv {
		// The live state holds a revision whose events may not all have
		// arrived: serve the state before it, which is complete.
		if st, ok := c.snaps.at(c.rv); ok {
			return st, c.rv, nil, nil
		}
	}
	if match == NotOlderThan || rv >= c.liveFrom {
		return c.liveCloneLocked(), c.rvFor(match, rv), nil, nil
	}
	if st, ok := c.snaps.at(rv); ok {
		return st, rv, nil, nil
	}
	if p, ok := c.replayPlanLocked(rv); ok {
		return nil, 0, p, nil
	}
	return nil, 0, nil, &TooOldError{Requested: rv, Oldest: c.snaps.oldest()}
}

func (c *Cache) rvFor(match Match, rv uint64) uint64 {
	if match == Exact {
		return rv
	}
	return c.rv
}

// liveCloneLocked returns an immutable copy of the live state, recording it
// as the snapshot at liveFrom so the next event does not clone again.
func (c *Cache) liveCloneLocked() *state {
	if c.liveSnapshotted {
		return c.snaps.list[len(c.snaps.list)-1].st
	}
	st := c.live.clone() // after Clone both trees copy on write: st stays frozen
	c.snaps.push(snapshot{rv: c.liveFrom, until: openEnd, seq: c.seq, st: st}, c.oldest)
	c.liveSnapshotted = true
	return st
}

// page collects one page of st.
func (st *state) page(q *ListOptions, rv uint64) ListResult {
	res := ListResult{RV: rv}
	if q.Recursive && q.Index != nil {
		if _, ok := st.indexes[q.Index.Name]; !ok {
			q.Index = nil
		}
	}
	memo := q.Recursive && q.CountRemaining && q.Filter == nil && q.Index == nil && q.Limit > 0
	from := max(q.Key, q.StartKey)
	known, haveKnown := 0, false
	if memo {
		known, haveKnown = st.remaining.get(q.Key, from)
	}
	if q.Recursive {
		res.Items = make([]*Element, 0, st.pageCapacity(q))
	}
	st.ascend(q, func(el *Element) bool {
		// A full page has more when any key follows it, matching or not:
		// the etcd3 store (and Kubernetes) answer the same, and the scan
		// stops at once instead of looking for one more match.
		if q.Limit > 0 && len(res.Items) >= q.Limit {
			if !res.More {
				res.More, res.NextKey = true, res.Items[len(res.Items)-1].Key+"\x00"
				if !q.CountRemaining {
					return false
				}
				if haveKnown {
					// Every element from `from` on is counted already.
					res.Remaining = int64(known - len(res.Items))
					return false
				}
			}
			res.Remaining++
			return true
		}
		if q.Filter != nil && !q.Filter(el) {
			return true
		}
		res.Items = append(res.Items, el)
		return true
	})
	if memo && res.More {
		st.remaining.put(q.Key, res.NextKey, int(res.Remaining))
	}
	return res
}

// unlimitedPageStart is the first capacity of an unlimited page that may
// hold only part of the state: room for the lists of one namespace or one
// node at once, growing from there for bigger ones.
const unlimitedPageStart = 256

// pageCapacity is the first capacity of the items of a recursive page of
// q, at most the state's size: its limit; for an unlimited page, the
// whole state when every key is under q.Key and nothing filters (a list
// of everything then needs one allocation), else unlimitedPageStart.
func (st *state) pageCapacity(q *ListOptions) int {
	n := st.byKey.Len()
	if q.Limit > 0 {
		return min(q.Limit, n)
	}
	if q.Index == nil && q.Filter == nil {
		if first, ok := st.allUnder(q.Key); ok && strings.HasPrefix(first, q.Key) {
			return n
		}
	}
	return min(unlimitedPageStart, n)
}

// String describes the options for logs.
func (q ListOptions) String() string {
	return fmt.Sprintf("key=%q recursive=%v start=%q limit=%d", q.Key, q.Recursive, q.StartKey, q.Limit)
}
