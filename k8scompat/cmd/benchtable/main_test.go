package main

import (
	"strings"
	"testing"
)

func TestTableRatios(t *testing.T) {
	in := `BenchmarkStoreList/Backend=listwatch-etcd3/Indexed=false/RV=/Scope=Cluster/Paginate=0-2  5  69336996 ns/op  14.42 list-calls/s  200 list-objs/s
BenchmarkStoreList/Backend=k8s-etcd3/Indexed=false/RV=/Scope=Cluster/Paginate=0-2  5  69336996 ns/op  10 list-calls/s  100 list-objs/s
BenchmarkStoreList/Backend=listwatch-cacher/Indexed=true/RV=/Scope=Cluster/Paginate=0-2  5  1 ns/op  50 list-objs/s
BenchmarkStoreList/Backend=k8s-cacher/Indexed=true/RV=/Scope=Cluster/Paginate=0-2  5  1 ns/op  100 list-objs/s
PASS`
	tb := newTable()
	for _, l := range strings.Split(in, "\n") {
		tb.parseLine(l)
	}
	var out strings.Builder
	tb.print(&out)
	s := out.String()
	for _, want := range []string{
		"| StoreList/Indexed=false/RV=/Scope=Cluster/Paginate=0 | list-objs/s | 200.0 | 100.0 | 2.00 | - | - | - |",
		"| StoreList/Indexed=true/RV=/Scope=Cluster/Paginate=0 | list-objs/s | - | - | - | 50.0 | 100.0 | 0.50 |",
		"etcd3 store 2.00 (n=1), cacher 0.50 (n=1)",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("table lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "ns/op") || strings.Contains(s, "list-calls/s") {
		t.Errorf("ns/op and list-calls/s must not be tabled:\n%s", s)
	}
}

// The peer benchmarks put the backend last in the name, before the
// GOMAXPROCS suffix; lower-is-better metrics stay out of the geometric mean.
func TestTablePeerNames(t *testing.T) {
	in := `BenchmarkPeerFanout/Watchers=10/Backend=listwatch-cacher-2  1  5 ns/op  300 events/s  2 p99-ms
BenchmarkPeerFanout/Watchers=10/Backend=k8s-cacher-2  1  5 ns/op  100 events/s  4 p99-ms`
	tb := newTable()
	for _, l := range strings.Split(in, "\n") {
		tb.parseLine(l)
	}
	var out strings.Builder
	tb.print(&out)
	s := out.String()
	for _, want := range []string{
		"| PeerFanout/Watchers=10 | events/s | - | - | - | 300.0 | 100.0 | 3.00 |",
		"| PeerFanout/Watchers=10 | p99-ms | - | - | - | 2.0 | 4.0 | 0.50 |",
		"cacher 3.00 (n=1)",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("table lacks %q:\n%s", want, s)
		}
	}
}
