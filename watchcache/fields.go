package watchcache

import (
	"encoding/binary"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/fields"

	"github.com/listwatch/listwatch/storage"
)

// Fields is an element's field set in compact form: the sorted field
// names, shared by every set with the same names (objects of a resource
// almost always have the same selectable fields), and the values in one
// string, each after its length as a uvarint, in the names' order. It
// implements fields.Fields. Ten fields of a pod take 24 bytes plus their
// values, instead of a map of about 700 bytes or a slice of 320.
type Fields struct {
	names *fieldNames
	vals  string
}

// fieldNames is an interned, sorted set of field names.
type fieldNames struct{ sorted []string }

// maxInternedFieldNames bounds the table of name sets; when it is full it
// starts over (sets keep the names they have).
const maxInternedFieldNames = 1024

// fieldNameTable interns the name sets of every cache: a set costs its
// slice once, whichever cache holds it.
var fieldNameTable struct {
	mu   sync.Mutex
	last atomic.Pointer[fieldNames]
	sets map[string]*fieldNames
}

// internFieldNames returns the shared sorted names of f, nil when f is empty.
func internFieldNames(f fields.Set) *fieldNames {
	if len(f) == 0 {
		return nil
	}
	if last := fieldNameTable.last.Load(); last != nil && last.sameNames(f) {
		return last
	}
	names := make([]string, 0, len(f))
	for n := range f {
		names = append(names, n)
	}
	slices.Sort(names)
	id := strings.Join(names, "\x00")
	fieldNameTable.mu.Lock()
	defer fieldNameTable.mu.Unlock()
	fn, ok := fieldNameTable.sets[id]
	if !ok {
		if fieldNameTable.sets == nil || len(fieldNameTable.sets) >= maxInternedFieldNames {
			fieldNameTable.sets = make(map[string]*fieldNames)
		}
		fn = &fieldNames{sorted: names}
		fieldNameTable.sets[id] = fn
	}
	fieldNameTable.last.Store(fn)
	return fn
}

// sameNames reports whether f has exactly these names.
func (n *fieldNames) sameNames(f fields.Set) bool {
	if len(f) != len(n.sorted) {
		return false
	}
	for name := range f {
		if _, ok := slices.BinarySearch(n.sorted, name); !ok {
			return false
		}
	}
	return true
}

// valuesLen returns the length of f's values in compact form.
func (n *fieldNames) valuesLen(f fields.Set) int {
	size := 0
	if n == nil {
		return 0
	}
	for _, name := range n.sorted {
		v := f[name]
		size += uvarintLen(uint64(len(v))) + len(v)
	}
	return size
}

// writeValues writes f's values in compact form to b.
func (n *fieldNames) writeValues(b *strings.Builder, f fields.Set) {
	if n == nil {
		return
	}
	var l [binary.MaxVarintLen64]byte
	for _, name := range n.sorted {
		v := f[name]
		b.Write(binary.AppendUvarint(l[:0], uint64(len(v))))
		b.WriteString(v)
	}
}

func uvarintLen(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}

// NewFields returns the compact form of f.
func NewFields(f fields.Set) Fields {
	names := internFieldNames(f)
	var b strings.Builder
	b.Grow(names.valuesLen(f))
	names.writeValues(&b, f)
	return Fields{names: names, vals: b.String()}
}

// Lookup returns the value of field name and whether it is set.
func (f Fields) Lookup(name string) (string, bool) {
	if f.names == nil {
		return "", false
	}
	i, ok := slices.BinarySearch(f.names.sorted, name)
	if !ok {
		return "", false
	}
	return f.value(i), true
}

// value returns the i-th value.
func (f Fields) value(i int) string {
	off := 0
	for {
		n, next := stringUvarint(f.vals, off)
		if i == 0 {
			return f.vals[next : next+int(n)]
		}
		off = next + int(n)
		i--
	}
}

// stringUvarint decodes the uvarint at s[off:] and returns it with the
// offset after it.
func stringUvarint(s string, off int) (uint64, int) {
	var x uint64
	var shift uint
	for i := off; i < len(s); i++ {
		b := s[i]
		if b < 0x80 {
			return x | uint64(b)<<shift, i + 1
		}
		x |= uint64(b&0x7f) << shift
		shift += 7
	}
	return x, len(s)
}

// Has reports whether field name is set (fields.Fields).
func (f Fields) Has(name string) bool {
	_, ok := f.Lookup(name)
	return ok
}

// Get returns the value of field name, "" when unset (fields.Fields).
func (f Fields) Get(name string) string {
	v, _ := f.Lookup(name)
	return v
}

// Len returns the number of fields.
func (f Fields) Len() int {
	if f.names == nil {
		return 0
	}
	return len(f.names.sorted)
}

// Set returns the fields as a new fields.Set.
func (f Fields) Set() fields.Set {
	s := make(fields.Set, f.Len())
	for i := range f.Len() {
		s[f.names.sorted[i]] = f.value(i)
	}
	return s
}

// Matches reports whether el's labels and fields satisfy p's selectors, as
// p.MatchesObjectAttributes would with el's sets as maps, and el's object
// is in p's shard, if any. Only the shard needs the object (with a Codec,
// possibly a decoding); an object that cannot be decoded is in no shard.
func (el *Element) Matches(p *storage.SelectionPredicate) bool {
	if (p.Label != nil && !p.Label.Matches(el.Labels)) || (p.Field != nil && !p.Field.Matches(el.Fields)) {
		return false
	}
	if !p.Sharded() {
		return true
	}
	obj, err := el.Object()
	return err == nil && p.MatchesShard(obj)
}
