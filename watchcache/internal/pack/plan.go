package pack

import "reflect"

// Bounds of a plan: a recursive type (a schema of schemas) is
// unfolded to maxPlanDepth, and a cache plans at most maxPlanNodes places
// in all; values deeper or beyond are left as they are.
const (
	maxPlanDepth = 16
	maxPlanNodes = 8192
)

// planner builds and keeps the plan of each object type: the places of the
// type that can hold strings to share.
type planner struct {
	roots map[reflect.Type]*node
	// strings memoizes whether a type can hold strings to share.
	strings map[reflect.Type]bool
	// nodes counts the places planned (bounded by maxPlanNodes).
	nodes int
	// tables are every string table of the plans.
	tables []*stringTable
}

// node is one place in an object type (a field, the elements of a slice,
// the values of a map) and what the packer learned about the values found
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
	// plans is where new per-key tables are registered.
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
		n.maps = &mapTable{}
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

// stringMapType is the map type a map place is handled as: maps of other
// types (a map[string]Role) are left alone.
var stringMapType = reflect.TypeFor[map[string]string]()

// holdsStrings reports whether a value of type t can hold a string to
// share: a string, a map[string]string (or a type of that underlying
// type), or a struct, pointer, slice or array reaching one through
// exported fields (not interfaces).
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
		v = t.ConvertibleTo(stringMapType)
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
