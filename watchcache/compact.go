package watchcache

import (
	"reflect"
	"sync"

	"k8s.io/apimachinery/pkg/runtime"
)

// compactor rewrites each object entering a cache that keeps decoded
// objects so that it takes less memory, without changing its value:
//
//   - strings that repeat across objects at the same place (a namespace, a
//     label, a node name, an image, a long annotation every object carries)
//     become one shared copy; a place whose values mostly differ (a name,
//     a UID) is judged so after a sample and is no longer looked up;
//   - equal map[string]string values at the same place (label sets, node
//     selectors) become one shared map; other such maps are rebuilt with
//     shared keys and values;
//   - the strings left are copied into one allocation when the allocator's
//     size classes make that smaller than one allocation each.
//
// The object must be the cache's own: no one may read it while it is
// rewritten, and no one may modify it afterwards (its maps and strings are
// shared with other objects). It walks exported fields by reflection, with
// one plan per type (see plan.go); interfaces are left alone, so
// unstructured objects are not rewritten. Safe for concurrent use.
type compactor struct {
	mu    sync.Mutex
	plans planner
	// tableBytes is the size of the strings the tables of every place
	// keep; past maxTableBytes every table starts over.
	tableBytes int
}

// Bounds of the compactor's tables: what it keeps for sharing costs memory
// of its own, and keeps values of deleted objects alive until dropped.
const (
	// sampleSize is how many values a place sees before it may be judged
	// to hold mostly distinct values.
	sampleSize = 256
	// maxTableEntries bounds the values (or maps) one place keeps for
	// sharing; a full table starts over.
	maxTableEntries = 4096
	// maxTableBytes bounds the string bytes all the tables of a cache keep.
	maxTableBytes = 16 << 20
	// maxKeyedTables bounds the per-key value tables of one map place
	// (annotation names); values under further keys share one table.
	maxKeyedTables = 64
	// maxShortString is the longest string packing counts as short (see
	// pass.pack).
	maxShortString = 128
)

// pass is the state of one object's rewrite.
type pass struct {
	c *compactor
	// loose are the strings of the object not shared with other objects,
	// candidates for packing into one allocation.
	loose []*string
	// maps are the rebuilt maps to set once their loose values are packed.
	maps []pendingMap
}

// pendingMap is a map rebuilt from pairs, stored at dst once the pairs'
// loose strings are packed.
type pendingMap struct {
	dst   *map[string]string
	pairs []stringPair
	table *mapTable
	hash  uint64
}

type stringPair struct{ k, v string }

// compact rewrites obj in place (see compactor).
func (c *compactor) compact(obj runtime.Object) {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	root := c.plans.plan(v.Type().Elem())
	if root == nil {
		return
	}
	p := pass{c: c}
	p.walk(root, v.Elem())
	p.pack()
	for _, m := range p.maps {
		out := make(map[string]string, len(m.pairs))
		for _, kv := range m.pairs {
			out[kv.k] = kv.v
		}
		*m.dst = out
		if m.table != nil {
			m.table.add(m.hash, out)
		}
	}
}

// walk rewrites the addressable value v of n's type.
func (p *pass) walk(n *node, v reflect.Value) {
	switch n.kind {
	case reflect.String:
		s := (*string)(v.Addr().UnsafePointer())
		p.str(n.strs, s)
	case reflect.Struct:
		for _, f := range n.fields {
			p.walk(f.node, v.Field(f.index))
		}
	case reflect.Pointer:
		if !v.IsNil() {
			p.walk(n.elem, v.Elem())
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			p.walk(n.elem, v.Index(i))
		}
	case reflect.Map:
		p.stringMap(n, (*map[string]string)(v.Addr().UnsafePointer()))
	}
}

// str shares *s with equal strings at its place, or marks it loose.
func (p *pass) str(t *stringTable, s *string) {
	if *s == "" {
		return
	}
	if shared, ok := t.intern(*s, p.c); ok {
		*s = shared
		return
	}
	p.loose = append(p.loose, s)
}

// stringMap shares the map at dst with an equal map at its place, or
// rebuilds it with shared keys and values.
func (p *pass) stringMap(n *node, dst *map[string]string) {
	m := *dst
	if len(m) == 0 {
		return
	}
	var h uint64
	table := n.maps
	if table.judging() {
		h = table.hash(m)
		if shared, ok := table.find(h, m); ok {
			*dst = shared
			return
		}
	} else {
		table = nil
	}
	pairs := make([]stringPair, 0, len(m))
	for k, v := range m {
		pairs = append(pairs, stringPair{k, v})
	}
	for i := range pairs {
		kv := &pairs[i]
		vals := n.valuesOf(kv.k)
		if shared, ok := n.keys.intern(kv.k, p.c); ok {
			kv.k = shared
		} else {
			p.loose = append(p.loose, &kv.k)
		}
		p.str(vals, &kv.v)
	}
	p.maps = append(p.maps, pendingMap{dst: dst, pairs: pairs, table: table, hash: h})
}

// pack copies the loose strings into one allocation when that takes less
// memory than their own allocations: all of them, or only the short ones
// (a long string wastes little of its own allocation, and could push the
// shared one into a much larger size class), whichever saves more.
func (p *pass) pack() {
	best, saved := -1, 0
	for _, limit := range [...]int{-1, maxShortString} {
		total, apart := 0, 0
		for _, s := range p.loose {
			if limit < 0 || len(*s) <= limit {
				total += len(*s)
				apart += allocSize(len(*s))
			}
		}
		if gain := apart - allocSize(total); gain > saved {
			best, saved = limit, gain
		}
	}
	if saved == 0 {
		return
	}
	total := 0
	for _, s := range p.loose {
		if best < 0 || len(*s) <= best {
			total += len(*s)
		}
	}
	buf := make([]byte, 0, total)
	for _, s := range p.loose {
		if best < 0 || len(*s) <= best {
			at := len(buf)
			buf = append(buf, *s...)
			*s = bytesString(buf[at:len(buf):len(buf)])
		}
	}
}

// stringTable shares equal strings found at one place of a type.
type stringTable struct {
	seen, hits int
	// distinct is set once the place is judged to hold mostly distinct
	// values: they are no longer looked up.
	distinct bool
	vals     map[string]string
	// bytes is the size of the strings in vals.
	bytes int
}

// intern returns the shared string equal to s and true, or false when s's
// place holds mostly distinct values. A string seen first is copied, so that
// the shared copy is an allocation of its own.
func (t *stringTable) intern(s string, c *compactor) (string, bool) {
	if t.distinct {
		return s, false
	}
	t.seen++
	if shared, ok := t.vals[s]; ok {
		t.hits++
		return shared, true
	}
	if t.seen >= sampleSize && t.hits*4 < t.seen {
		c.tableBytes -= t.bytes
		t.distinct, t.vals, t.bytes = true, nil, 0
		return s, false
	}
	if t.seen >= 1<<16 {
		t.seen, t.hits = t.seen/2, t.hits/2
	}
	if t.vals == nil || len(t.vals) >= maxTableEntries {
		c.tableBytes -= t.bytes
		t.vals, t.bytes = make(map[string]string), 0
	}
	if c.tableBytes+len(s) > maxTableBytes {
		c.dropTables()
		t.vals = make(map[string]string)
	}
	shared := string([]byte(s))
	t.vals[shared] = shared
	t.bytes += len(s)
	c.tableBytes += len(s)
	return shared, true
}

// dropTables empties every string table (their judgments are kept).
func (c *compactor) dropTables() {
	for _, t := range c.plans.tables {
		t.vals, t.bytes = nil, 0
	}
	c.tableBytes = 0
}
