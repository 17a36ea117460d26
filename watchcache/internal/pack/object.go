package pack

import (
	"reflect"
	"unique"

	"k8s.io/apimachinery/pkg/runtime"
)

// objects rewrites decoded objects so that the strings and
// map[string]string values that repeat at one place across objects (a
// namespace, a label set, a node name, an image, an annotation every
// object carries) are one shared copy. A place whose values mostly differ
// (a name, a UID) is judged so after a sample and no longer looked up.
// It walks exported fields by reflection, with one plan per type (see
// plan.go); interfaces are left alone, so unstructured objects are not
// rewritten. Not safe for concurrent use: packer guards it.
type objects struct {
	plans planner
	// heldBytes is the size of the strings every table holds; past
	// maxHeldBytes every table starts over.
	heldBytes int
}

// Bounds of the tables: what they hold for sharing costs memory of its
// own, and keeps values of deleted objects alive until dropped.
const (
	// sampleSize is how many values a place sees before it may be judged
	// to hold mostly distinct values.
	sampleSize = 256
	// maxTableEntries bounds the values (or maps) one place holds; a
	// full table starts over.
	maxTableEntries = 4096
	// maxHeldBytes bounds the string bytes all the tables of a packer hold.
	maxHeldBytes = 16 << 20
	// maxKeyedTables bounds the per-key value tables of one map place
	// (annotation names); values under further keys share one table.
	maxKeyedTables = 64
)

// rewrite rewrites obj in place (see objects).
func (o *objects) rewrite(obj runtime.Object) {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return
	}
	if root := o.plans.plan(v.Type().Elem()); root != nil {
		o.walk(root, v.Elem())
	}
}

// walk rewrites the addressable value v of n's type.
func (o *objects) walk(n *node, v reflect.Value) {
	switch n.kind {
	case reflect.String:
		if s, ok := n.strs.intern(v.String(), o); ok {
			v.SetString(s)
		}
	case reflect.Struct:
		for _, f := range n.fields {
			o.walk(f.node, v.Field(f.index))
		}
	case reflect.Pointer:
		if !v.IsNil() {
			o.walk(n.elem, v.Elem())
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			o.walk(n.elem, v.Index(i))
		}
	case reflect.Map:
		o.stringMap(n, v)
	}
}

// stringMap replaces the map[string]string v with an equal map found
// before at its place, or with a copy whose keys and values are shared.
func (o *objects) stringMap(n *node, v reflect.Value) {
	if v.Len() == 0 {
		return
	}
	m := v.Convert(stringMapType).Interface().(map[string]string)
	shared, h, judging := n.maps.find(m)
	if shared == nil {
		shared = make(map[string]string, len(m))
		for k, val := range m {
			if s, ok := n.keys.intern(k, o); ok {
				k = s
			}
			if s, ok := n.valuesOf(k).intern(val, o); ok {
				val = s
			}
			shared[k] = val
		}
		if judging {
			n.maps.add(h, shared)
		}
	}
	v.Set(reflect.ValueOf(shared).Convert(v.Type()))
}

// stringTable shares the equal strings found at one place of a type. It
// holds a handle of each value it shares (unique.Make), which keeps the
// canonical copy alive while the table holds it.
type stringTable struct {
	seen, hits int
	// distinct is set once the place is judged to hold mostly distinct
	// values: they are no longer looked up.
	distinct bool
	held     map[unique.Handle[string]]struct{}
	// bytes is the size of the strings held.
	bytes int
}

// intern returns the canonical copy of s and true, or false when s's place
// holds mostly distinct values (or s is empty).
func (t *stringTable) intern(s string, o *objects) (string, bool) {
	if t.distinct || s == "" {
		return s, false
	}
	t.seen++
	h := unique.Make(s)
	if _, ok := t.held[h]; ok {
		t.hits++
		return h.Value(), true
	}
	if t.seen >= sampleSize && t.hits*4 < t.seen {
		o.heldBytes -= t.bytes
		t.distinct, t.held, t.bytes = true, nil, 0
		return s, false
	}
	if t.seen >= 1<<16 {
		t.seen, t.hits = t.seen/2, t.hits/2
	}
	if t.held == nil || len(t.held) >= maxTableEntries {
		o.heldBytes -= t.bytes
		t.held, t.bytes = make(map[unique.Handle[string]]struct{}), 0
	}
	if o.heldBytes+len(s) > maxHeldBytes {
		o.dropTables()
		t.held = make(map[unique.Handle[string]]struct{})
	}
	t.held[h] = struct{}{}
	t.bytes += len(s)
	o.heldBytes += len(s)
	return h.Value(), true
}

// dropTables empties every string table (their judgments are kept).
func (o *objects) dropTables() {
	for _, t := range o.plans.tables {
		t.held, t.bytes = nil, 0
	}
	o.heldBytes = 0
}
