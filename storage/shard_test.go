package storage

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/sharding"
	"k8s.io/apimachinery/pkg/util/uuid"
)

func TestParseShardSelector(t *testing.T) {
	half := "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')"
	for _, tc := range []struct {
		expr, wantErr string
		ranges        int
	}{
		{expr: half, ranges: 1},
		{expr: `shardRange(object.metadata.namespace,"0x8000000000000000","0x10000000000000000")`, ranges: 1},
		{expr: half + " || shardRange(object.metadata.uid, '0xc000000000000000', '0x10000000000000000')", ranges: 2},
		{expr: "", wantErr: "empty shard selector"},
		{expr: "shardRange(object.metadata.name, '0x0000000000000000', '0x8000000000000000')", wantErr: "unsupported field path"},
		{expr: "shardRange(object.metadata.uid, '0x0', '0x8000000000000000')", wantErr: "16-digit"},
		{expr: "shardRange(object.metadata.uid, '0X0000000000000000', '0x8000000000000000')", wantErr: "0x prefix"},
		{expr: "shardRange(object.metadata.uid, '0x000000000000000G', '0x8000000000000000')", wantErr: "not lower-case hex"},
		{expr: "shardRange(object.metadata.uid, '0x8000000000000000', '0x8000000000000000')", wantErr: "must be less than"},
		{expr: "shardRange(object.metadata.uid, '0x0000000000000000', '0x20000000000000000')", wantErr: "16-digit"},
		{expr: half + " && " + half, wantErr: "expected ||"},
		{expr: half + " || shardRange(object.metadata.namespace, '0x0000000000000000', '0x8000000000000000')", wantErr: "same field"},
		{expr: "shardRange(object.metadata.uid, '0x0000000000000000')", wantErr: "expected , after the start"},
		{expr: "size(object.metadata.uid)", wantErr: "only shardRange() and || are allowed"},
		{expr: "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000", wantErr: "unterminated"},
	} {
		sel, err := ParseShardSelector(tc.expr)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, ErrInvalidArgument) {
				t.Errorf("%q: %v, want an invalid-argument error containing %q", tc.expr, err, tc.wantErr)
			}
			continue
		}
		if err != nil || len(sel.Requirements()) != tc.ranges {
			t.Errorf("%q: %v, %v; want %d ranges", tc.expr, sel, err, tc.ranges)
		}
	}
}

// The selector keeps exactly the objects whose FNV-1a hash of the field is
// in [start, end): two halves partition any set of objects.
func TestShardHalvesPartition(t *testing.T) {
	low, err := ParseShardSelector("shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')")
	if err != nil {
		t.Fatal(err)
	}
	high, err := ParseShardSelector("shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000')")
	if err != nil {
		t.Fatal(err)
	}
	var inLow int
	for range 200 {
		u := &unstructured.Unstructured{}
		u.SetUID(uuid.NewUUID())
		pl := SelectionPredicate{Shard: low}
		ph := SelectionPredicate{Shard: high}
		l, _ := pl.Matches(u)
		h, _ := ph.Matches(u)
		if l == h {
			t.Fatalf("uid %s in low %v and high %v", u.GetUID(), l, h)
		}
		if want := sharding.HashField(string(u.GetUID())) < "8"; l != want {
			t.Fatalf("uid %s: low %v, hash %s", u.GetUID(), l, sharding.HashField(string(u.GetUID())))
		}
		if l {
			inLow++
		}
	}
	if inLow < 60 || inLow > 140 {
		t.Fatalf("%d of 200 in the low half: the hash does not spread", inLow)
	}
	if !(&SelectionPredicate{Shard: low}).Sharded() || (&SelectionPredicate{Shard: low}).Empty() {
		t.Fatal("a sharded predicate must not be Empty")
	}
}

// The parsed selector selects exactly what apimachinery's does.
func TestShardSelectorMatchesApimachinery(t *testing.T) {
	for _, expr := range []string{
		"shardRange(object.metadata.uid, '0x0000000000000000', '0x5555555555555555')",
		"shardRange(object.metadata.uid, '0x5555555555555555', '0xaaaaaaaaaaaaaaaa') || shardRange(object.metadata.uid, '0xf000000000000000', '0x10000000000000000')",
	} {
		sel, err := ParseShardSelector(expr)
		if err != nil {
			t.Fatal(err)
		}
		ref := sharding.NewSelector(sel.Requirements()...)
		for range 500 {
			u := &unstructured.Unstructured{}
			u.SetUID(uuid.NewUUID())
			got, err1 := sel.Matches(u)
			want, err2 := ref.Matches(u)
			if got != want || err1 != nil || err2 != nil {
				t.Fatalf("%s on uid %s: %v (%v), apimachinery %v (%v)", expr, u.GetUID(), got, err1, want, err2)
			}
		}
		if sel.String() != ref.String() {
			t.Fatalf("String %q, want %q", sel.String(), ref.String())
		}
	}
}
