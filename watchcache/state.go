package watchcache

import (
	"strings"

	"github.com/google/btree"
)

// btreeDegree is the B-tree degree; 16 keeps nodes within a few cache lines
// while keeping trees shallow.
const btreeDegree = 16

// LabelIndex names the secondary index of label name.
func LabelIndex(name string) string { return "label:" + name }

// FieldIndex names the secondary index of field name.
func FieldIndex(name string) string { return "field:" + name }

// indexEntry is one (value, key) pair of a secondary index.
type indexEntry struct {
	value string
	el    *Element
}

func lessElement(a, b *Element) bool { return a.Key < b.Key }

func lessIndexEntry(a, b indexEntry) bool {
	if a.value != b.value {
		return a.value < b.value
	}
	return a.el.Key < b.el.Key
}

// indexDef says how to read an index value from an element.
type indexDef struct {
	name  string
	label bool   // a label index; otherwise a field index
	attr  string // the label or field name
}

func (d indexDef) valueOf(el *Element) (string, bool) {
	if d.label {
		v, ok := el.Labels[d.attr]
		return v, ok
	}
	return el.Fields.Lookup(d.attr)
}

// state is the set of current objects: a B-tree by key plus one B-tree per
// secondary index. clone is O(1); both copies stay usable concurrently
// (copy-on-write), so a clone is an immutable snapshot when never written.
type state struct {
	byKey   *btree.BTreeG[*Element]
	indexes map[string]*btree.BTreeG[indexEntry]
	defs    []indexDef
	// remaining is set on frozen states only (see clone).
	remaining *remainingMemo
}

func newState(defs []indexDef) *state {
	s := &state{byKey: btree.NewG(btreeDegree, lessElement), defs: defs,
		indexes: make(map[string]*btree.BTreeG[indexEntry], len(defs))}
	for _, d := range defs {
		s.indexes[d.name] = btree.NewG(btreeDegree, lessIndexEntry)
	}
	return s
}

// clone returns a copy of s. Callers keep writing s and never write the
// copy, which is therefore frozen and may memoize counts.
func (s *state) clone() *state {
	c := &state{byKey: s.byKey.Clone(), defs: s.defs, remaining: &remainingMemo{}, indexes: make(map[string]*btree.BTreeG[indexEntry], len(s.indexes))}
	for n, t := range s.indexes {
		c.indexes[n] = t.Clone()
	}
	return c
}

func (s *state) get(key string) (*Element, bool) {
	return s.byKey.Get(&Element{Key: key})
}

// put stores el, replacing (and unindexing) the element with its key.
func (s *state) put(el *Element) {
	old, had := s.byKey.ReplaceOrInsert(el)
	for _, d := range s.defs {
		t := s.indexes[d.name]
		if had {
			if v, ok := d.valueOf(old); ok {
				t.Delete(indexEntry{value: v, el: old})
			}
		}
		if v, ok := d.valueOf(el); ok {
			t.ReplaceOrInsert(indexEntry{value: v, el: el})
		}
	}
}

func (s *state) remove(key string) {
	old, had := s.byKey.Delete(&Element{Key: key})
	if !had {
		return
	}
	for _, d := range s.defs {
		if v, ok := d.valueOf(old); ok {
			s.indexes[d.name].Delete(indexEntry{value: v, el: old})
		}
	}
}

// ascend calls fn for elements with prefix (recursive) or key == prefix
// (not recursive), starting at start (inclusive), in key order, until fn
// returns false. With index != "", only elements whose index value is
// value are visited.
func (s *state) ascend(q *ListOptions, fn func(*Element) bool) bool {
	from := max(q.Key, q.StartKey)
	if !q.Recursive {
		if el, ok := s.get(q.Key); ok && q.StartKey <= q.Key {
			if q.Index == nil || indexValueMatches(s, q.Index, el) {
				fn(el)
			}
		}
		return true
	}
	if q.Index != nil {
		t, ok := s.indexes[q.Index.Name]
		if !ok {
			return false
		}
		t.AscendGreaterOrEqual(indexEntry{value: q.Index.Value, el: &Element{Key: from}}, func(e indexEntry) bool {
			if e.value != q.Index.Value || !strings.HasPrefix(e.el.Key, q.Key) {
				return false
			}
			return fn(e.el)
		})
		return true
	}
	s.byKey.AscendGreaterOrEqual(&Element{Key: from}, func(el *Element) bool {
		if !strings.HasPrefix(el.Key, q.Key) {
			return false
		}
		return fn(el)
	})
	return true
}

func indexValueMatches(s *state, iv *IndexValue, el *Element) bool {
	for _, d := range s.defs {
		if d.name == iv.Name {
			v, ok := d.valueOf(el)
			return ok && v == iv.Value
		}
	}
	return false
}
