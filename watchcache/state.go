package watchcache

import (
	"strings"

	"k8s.io/apimachinery/pkg/fields"

	"github.com/google/btree"
)

// btreeDegree is the B-tree degree; 16 keeps nodes within a few cache lines
// while keeping trees shallow.
const btreeDegree = 16

// LabelIndex names the secondary index of label name.
func LabelIndex(name string) string { return "label:" + name }

// FieldIndex names the secondary index of field name.
func FieldIndex(name string) string { return "field:" + name }

func lessElement(a, b *Element) bool { return a.Key < b.Key }

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

// less orders the elements of the index by (value, key). An index holds
// only elements that have the value, and holds the elements themselves (8
// bytes an entry) rather than (value, element) pairs (24): the value is read
// from the element when comparing.
func (d indexDef) less(a, b *Element) bool {
	va, _ := d.valueOf(a)
	vb, _ := d.valueOf(b)
	if va != vb {
		return va < vb
	}
	return a.Key < b.Key
}

// pivot returns a search element ordered at (value, key).
func (d indexDef) pivot(value, key string) *Element {
	if d.label {
		return &Element{Key: key, Labels: map[string]string{d.attr: value}}
	}
	return &Element{Key: key, Fields: NewFields(fields.Set{d.attr: value})}
}

// state is the set of current objects: a B-tree by key plus one B-tree per
// secondary index. clone is O(1); both copies stay usable concurrently
// (copy-on-write), so a clone is an immutable snapshot when never written.
type state struct {
	byKey   *btree.BTreeG[*Element]
	indexes map[string]*btree.BTreeG[*Element]
	defs    []indexDef
	// remaining is set on frozen states only (see clone).
	remaining *remainingMemo
}

func newState(defs []indexDef) *state {
	s := &state{byKey: btree.NewG(btreeDegree, lessElement), defs: defs,
		indexes: make(map[string]*btree.BTreeG[*Element], len(defs))}
	for _, d := range defs {
		s.indexes[d.name] = btree.NewG(btreeDegree, d.less)
	}
	return s
}

// clone returns a copy of s. Callers keep writing s and never write the
// copy, which is therefore frozen and may memoize counts.
func (s *state) clone() *state {
	c := &state{byKey: s.byKey.Clone(), defs: s.defs, remaining: &remainingMemo{}, indexes: make(map[string]*btree.BTreeG[*Element], len(s.indexes))}
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
			if _, ok := d.valueOf(old); ok {
				t.Delete(old)
			}
		}
		if _, ok := d.valueOf(el); ok {
			t.ReplaceOrInsert(el)
		}
	}
}

func (s *state) remove(key string) {
	old, had := s.byKey.Delete(&Element{Key: key})
	if !had {
		return
	}
	for _, d := range s.defs {
		if _, ok := d.valueOf(old); ok {
			s.indexes[d.name].Delete(old)
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
		d, okDef := s.def(q.Index.Name)
		if !ok || !okDef {
			return false
		}
		t.AscendGreaterOrEqual(d.pivot(q.Index.Value, from), func(el *Element) bool {
			if v, _ := d.valueOf(el); v != q.Index.Value || !strings.HasPrefix(el.Key, q.Key) {
				return false
			}
			return fn(el)
		})
		return true
	}
	if first, ok := s.allUnder(q.Key); ok {
		// Every key from `from` on has the prefix: no key needs reading,
		// which for a large list saves a memory load per element.
		if first >= from {
			s.byKey.Ascend(fn)
		} else {
			s.byKey.AscendGreaterOrEqual(&Element{Key: from}, fn)
		}
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

// allUnder reports whether every key from prefix on has prefix, that is,
// whether the largest key has it (the keys with a prefix are contiguous in
// key order), and returns the smallest key.
func (s *state) allUnder(prefix string) (first string, ok bool) {
	last, ok := s.byKey.Max()
	if !ok || !strings.HasPrefix(last.Key, prefix) {
		return "", false
	}
	lo, _ := s.byKey.Min()
	return lo.Key, true
}

func indexValueMatches(s *state, iv *IndexValue, el *Element) bool {
	d, ok := s.def(iv.Name)
	if !ok {
		return false
	}
	v, ok := d.valueOf(el)
	return ok && v == iv.Value
}

// def returns the index definition named name.
func (s *state) def(name string) (indexDef, bool) {
	for _, d := range s.defs {
		if d.name == name {
			return d, true
		}
	}
	return indexDef{}, false
}
