package watchcache

import (
	"hash/maphash"
	"maps"
	"reflect"
)

// Bounds of a compaction plan: a recursive type (a schema of schemas) is
// unfolded to maxPlanDepth, and a cache plans at most maxPlanNodes places
// in all; values deeper or beyond are left as they are.
const (
	maxPlanDepth = 16
	maxPlanNodes = 8192
)

// planner builds and keeps the compaction plan of each object type.
type planner struct {
	roots map[reflect.Type]*node
	// strings memoizes whether a type can hold strings compaction rewrites.
	strings map[reflect.Type]bool
	// nodes counts the places planned (bounded by maxPlanNodes).
	nodes int
	// tables are every string table of the plans.
	tables []*stringTable
	seed   maphash.Seed
}

// node is one place in an object type (a field, the elements of a slice,
// the values of a map) and what compaction learned about the values found
// there.
type node struct {
	kind reflect.Kind
	// fields are the struct fields worth walking.
	fields []fieldNode
	// elem is the node of a pointer's, slice's or array's elements.
	elem *node
	// strs shares the strings of a string place, and a map's values under
	// keys beyond those of byKey.
	strs *stringTable
	// keys, byKey and maps are a map[string]string place's: its keys, its
	// values under each key (annotations differ by name: one may repeat,
	// another never), and the maps themselves.
	keys  *stringTable
	byKey map[string]*stringTable
	maps  *mapTable
	// tables is where new per-key tables are registered.
	plans *planner
}

type fieldNode struct {
	index int
	node  *node
}

// plan returns the root node of type t, nil when nothing in t is rewritten.
func (p *planner) plan(t reflect.Type) *node {
	if n, ok := p.roots[t]; ok {
		return n
	}
	if p.roots == nil {
		p.roots = make(map[reflect.Type]*node)
		p.strings = make(map[reflect.Type]bool)
		p.seed = maphash.MakeSeed()
	}
	n := p.build(t, 0)
	p.roots[t] = n
	return n
}

// build plans type t at depth, nil when nothing in it is rewritten.
func (p *planner) build(t reflect.Type, depth int) *node {
	if depth > maxPlanDepth || p.nodes >= maxPlanNodes || !p.holdsStrings(t, map[reflect.Type]bool{}) {
		return nil
	}
	p.nodes++
	n := &node{kind: t.Kind(), plans: p}
	switch t.Kind() {
	case reflect.String:
		n.strs = p.table()
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			if fn := p.build(f.Type, depth+1); fn != nil {
				n.fields = append(n.fields, fieldNode{index: i, node: fn})
			}
		}
		if len(n.fields) == 0 {
			return nil
		}
	case reflect.Pointer, reflect.Slice, reflect.Array:
		if n.elem = p.build(t.Elem(), depth+1); n.elem == nil {
			return nil
		}
	case reflect.Map:
		n.strs, n.keys = p.table(), p.table()
		n.byKey = make(map[string]*stringTable)
		n.maps = &mapTable{seed: p.seed}
	default:
		return nil
	}
	return n
}

// table returns a new string table, registered for dropTables.
func (p *planner) table() *stringTable {
	t := &stringTable{}
	p.tables = append(p.tables, t)
	return t
}

// holdsStrings reports whether a value of type t can hold a string that
// compaction rewrites: a string, a map[string]string, or a struct, pointer,
// slice or array reaching one through exported fields (not interfaces).
func (p *planner) holdsStrings(t reflect.Type, visiting map[reflect.Type]bool) bool {
	if v, ok := p.strings[t]; ok {
		return v
	}
	if visiting[t] {
		return false
	}
	visiting[t] = true
	var v bool
	switch t.Kind() {
	case reflect.String:
		v = true
	case reflect.Map:
		v = t.Key().Kind() == reflect.String && t.Elem().Kind() == reflect.String
	case reflect.Pointer, reflect.Slice, reflect.Array:
		v = t.Kind() != reflect.Slice || t.Elem().Kind() != reflect.Uint8
		v = v && p.holdsStrings(t.Elem(), visiting)
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() && p.holdsStrings(f.Type, visiting) {
				v = true
				break
			}
		}
	}
	delete(visiting, t)
	if v || len(visiting) == 0 {
		p.strings[t] = v
	}
	return v
}

// valuesOf returns the table of the map values under key k.
func (n *node) valuesOf(k string) *stringTable {
	if t, ok := n.byKey[k]; ok {
		return t
	}
	if len(n.byKey) >= maxKeyedTables {
		return n.strs
	}
	t := n.plans.table()
	n.byKey[string([]byte(k))] = t
	return t
}

// mapTable shares equal map[string]string values found at one place.
type mapTable struct {
	seed       maphash.Seed
	seen, hits int
	// distinct is set once the place is judged to hold mostly distinct
	// maps: they are no longer looked up.
	distinct bool
	sets     map[uint64][]map[string]string
	n        int
}

// judging reports whether maps at this place are still looked up.
func (t *mapTable) judging() bool { return !t.distinct }

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

// find returns the shared map equal to m, whose hash is h.
func (t *mapTable) find(h uint64, m map[string]string) (map[string]string, bool) {
	t.seen++
	for _, shared := range t.sets[h] {
		if maps.Equal(shared, m) {
			t.hits++
			return shared, true
		}
	}
	if t.seen >= sampleSize && t.hits*4 < t.seen {
		t.distinct, t.sets, t.n = true, nil, 0
	}
	if t.seen >= 1<<16 {
		t.seen, t.hits = t.seen/2, t.hits/2
	}
	return nil, false
}

// add records m, whose hash is h, as the shared map of its content.
func (t *mapTable) add(h uint64, m map[string]string) {
	if t.distinct {
		return
	}
	if t.sets == nil || t.n >= maxTableEntries {
		t.sets, t.n = make(map[uint64][]map[string]string), 0
	}
	t.sets[h] = append(t.sets[h], m)
	t.n++
}
