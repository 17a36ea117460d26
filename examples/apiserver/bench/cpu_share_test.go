package bench

import (
	"bytes"
	"compress/gzip"
	"testing"

	"google.golang.org/protobuf/encoding/protowire"
)

// TestLabelShare reads a profile of three samples, one carrying the
// label, and one carrying another value of its key.
func TestLabelShare(t *testing.T) {
	strs := []string{"", "samples", "count", "cpu", "nanoseconds", "bench", "client", "other"}
	sample := func(ns int64, labels ...[2]uint64) []byte {
		var s []byte
		s = protowire.AppendTag(s, 2, protowire.BytesType)
		s = protowire.AppendBytes(s, protowire.AppendVarint(protowire.AppendVarint(nil, 1), uint64(ns)))
		for _, l := range labels {
			var lb []byte
			lb = protowire.AppendTag(lb, 1, protowire.VarintType)
			lb = protowire.AppendVarint(lb, l[0])
			lb = protowire.AppendTag(lb, 2, protowire.VarintType)
			lb = protowire.AppendVarint(lb, l[1])
			s = protowire.AppendTag(s, 3, protowire.BytesType)
			s = protowire.AppendBytes(s, lb)
		}
		return s
	}
	var p []byte
	for _, s := range [][]byte{sample(30, [2]uint64{5, 6}), sample(50), sample(20, [2]uint64{5, 7})} {
		p = protowire.AppendTag(p, 2, protowire.BytesType)
		p = protowire.AppendBytes(p, s)
	}
	for _, s := range strs {
		p = protowire.AppendTag(p, 6, protowire.BytesType)
		p = protowire.AppendString(p, s)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write(p); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := labelShare(gz.Bytes(), "bench", "client")
	if err != nil {
		t.Fatal(err)
	}
	if got != 0.3 {
		t.Fatalf("share %v, want 0.3 (30 of 100 ns)", got)
	}
	if _, err := labelShare([]byte("not gzip"), "bench", "client"); err == nil {
		t.Fatal("no error for a profile that is not gzipped")
	}
}
