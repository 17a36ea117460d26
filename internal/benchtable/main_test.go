package main

import (
	"strings"
	"testing"
)

func TestTablesGroupByBenchmarkWithOneColumnPerMetric(t *testing.T) {
	in := `goos: linux
pkg: github.com/listwatch/listwatch/bench
BenchmarkList/N=10000/source=etcd-2         	       1	5000000000 ns/op	       506.0 p50-ms	10000 objects
BenchmarkList/N=10000/source=cache-rv0-2    	       1	 100000000 ns/op	         4.8 p50-ms	10000 objects
BenchmarkFanout/W=10/source=cache-2         	       1	 2000 ns/op	     18500 events/s	  1.0 p50-ms
PASS
`
	var out strings.Builder
	if err := run(strings.NewReader(in), &out); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	for _, want := range []string{
		"goos: linux\n", "PASS\n",
		"### github.com/listwatch/listwatch/bench BenchmarkList\n\n| case | ns/op | p50-ms | objects |",
		"| N=10000/source=etcd | 5000000000 | 506.0 | 10000 |",
		"| N=10000/source=cache-rv0 | 100000000 | 4.8 | 10000 |",
		"### github.com/listwatch/listwatch/bench BenchmarkFanout\n\n| case | ns/op | events/s | p50-ms |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "BenchmarkList/N=10000") {
		t.Errorf("raw benchmark lines should become table rows:\n%s", got)
	}
}
