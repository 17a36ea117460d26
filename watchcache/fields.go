package watchcache

import (
	"slices"

	"k8s.io/apimachinery/pkg/fields"

	"github.com/listwatch/listwatch/storage"
)

// Fields is an element's field set in compact form: names and values
// alternating, sorted by name. It implements fields.Fields. A three-field
// set takes one 96-byte slice instead of a map of about 300 bytes, and the
// strings are shared with what GetAttrs returned (usually the object's own).
type Fields struct{ kv []string }

// NewFields returns the compact form of f.
func NewFields(f fields.Set) Fields {
	if len(f) == 0 {
		return Fields{}
	}
	names := make([]string, 0, len(f))
	for n := range f {
		names = append(names, n)
	}
	slices.Sort(names)
	kv := make([]string, 0, 2*len(f))
	for _, n := range names {
		kv = append(kv, n, f[n])
	}
	return Fields{kv: kv}
}

// Lookup returns the value of field name and whether it is set.
func (f Fields) Lookup(name string) (string, bool) {
	lo, hi := 0, len(f.kv)/2
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if f.kv[2*m] < name {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(f.kv)/2 && f.kv[2*lo] == name {
		return f.kv[2*lo+1], true
	}
	return "", false
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
func (f Fields) Len() int { return len(f.kv) / 2 }

// Set returns the fields as a new fields.Set.
func (f Fields) Set() fields.Set {
	s := make(fields.Set, f.Len())
	for i := 0; i < len(f.kv); i += 2 {
		s[f.kv[i]] = f.kv[i+1]
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
