package watchcache

import (
	"maps"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/listwatch/listwatch/storage"
)

func TestFieldsLookup(t *testing.T) {
	for _, set := range []fields.Set{nil, {}, {"a": "1"}, {"metadata.name": "n", "metadata.namespace": "", "spec.nodeName": "node-1"},
		{"z": "26", "a": "1", "m": "13", "b": "2", "y": "25"}} {
		f := NewFields(set)
		if f.Len() != len(set) || !maps.Equal(f.Set(), fields.Set(set)) && len(set) > 0 {
			t.Fatalf("%v: compact form %v", set, f.Set())
		}
		for _, name := range []string{"", "a", "b", "c", "metadata.name", "metadata.namespace", "spec.nodeName", "z", "zz"} {
			want, wantOK := set[name]
			got, ok := f.Lookup(name)
			if got != want || ok != wantOK || f.Has(name) != wantOK || f.Get(name) != want {
				t.Fatalf("%v: Lookup(%q) = %q %v, want %q %v", set, name, got, ok, want, wantOK)
			}
		}
	}
}

func TestElementMatchesAsPredicate(t *testing.T) {
	lbls := labels.Set{"app": "x", "tier": "t1"}
	flds := fields.Set{"metadata.name": "a", "metadata.namespace": "ns", "spec.nodeName": ""}
	el := &Element{Labels: lbls, Fields: NewFields(flds)}
	sels := []string{"", "metadata.name=a", "metadata.name!=a", "spec.nodeName=", "spec.nodeName!=", "metadata.namespace=ns,metadata.name=b", "other=x", "other!=x"}
	lsels := []string{"", "app=x", "app!=x", "app in (x,y)", "!tier", "tier", "app=x,tier=t2"}
	for _, fs := range sels {
		for _, ls := range lsels {
			p := storage.SelectionPredicate{}
			if fs != "" {
				p.Field = fields.ParseSelectorOrDie(fs)
			}
			if ls != "" {
				sel, err := labels.Parse(ls)
				if err != nil {
					t.Fatal(err)
				}
				p.Label = sel
			}
			if got, want := el.Matches(&p), p.MatchesObjectAttributes(lbls, flds); got != want {
				t.Fatalf("field %q label %q: Matches %v, MatchesObjectAttributes %v", fs, ls, got, want)
			}
		}
	}
}

// TestFieldsLongValuesAndSharedNames: values longer than one length byte
// (and empty ones) read back exactly, and sets with the same names share
// one name list.
func TestFieldsLongValuesAndSharedNames(t *testing.T) {
	long := strings.Repeat("v", 300)
	a := NewFields(fields.Set{"a": long, "b": "", "c": "x"})
	b := NewFields(fields.Set{"c": "y", "a": "1", "b": "2"})
	if v, _ := a.Lookup("a"); v != long {
		t.Fatalf("long value read back with %d bytes", len(v))
	}
	if v, ok := a.Lookup("b"); v != "" || !ok {
		t.Fatalf("empty value: %q %v", v, ok)
	}
	if v, _ := a.Lookup("c"); v != "x" {
		t.Fatalf("value after a long one: %q", v)
	}
	if a.names != b.names {
		t.Fatal("equal name sets are not shared")
	}
}
